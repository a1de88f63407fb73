import { Migration } from '@mikro-orm/migrations';

/**
 * The two embedded adapters keep their state beside ours, so a restart (or a second process on the same
 * database) continues it: the sandbox's simulated machines and offer state, and the manual processor's
 * checkout sessions. Only adapters read these tables; the core knows nothing of them.
 */
export class Migration0006SandboxAndManualCheckouts extends Migration {
  override name = '0006-sandbox-and-manual-checkouts';

  override up(): void {
    // machine ids are `sbx-<serial>`: one sequence for every process and every restart
    this.addSql('create sequence sandbox_machine_serial');
    // times are milliseconds on the sandbox's clock, as the simulator reckons them
    this.addSql(`
      create table sandbox_machines (
        machine_id text primary key,
        serial bigint not null,
        offer_id text not null,
        label text null,
        name text not null,
        image text not null,
        ssh_public_key text null,
        price_usd_per_hour text not null,
        ssh_host text not null,
        ssh_port integer not null,
        created_at_ms bigint not null,
        ready_at_ms bigint not null,
        mishap text null check (mishap in ('failed', 'stuck')),
        reboot_until_ms bigint not null default 0,
        terminated_at_ms bigint null,
        holds_capacity boolean not null
      )`);
    this.addSql('create index sandbox_machines_live on sandbox_machines (serial) where terminated_at_ms is null');
    this.addSql('create index sandbox_machines_ended on sandbox_machines (terminated_at_ms) where terminated_at_ms is not null');
    // only offers something happened to: the catalog itself is generated from the seed
    this.addSql(`
      create table sandbox_offers (
        offer_id text primary key,
        taken integer not null default 0 check (taken >= 0),
        withdrawn boolean not null default false,
        price_usd_per_hour text null
      )`);
    this.addSql(`
      create table manual_checkouts (
        session_id text primary key,
        tenant_id text not null,
        deposit_id text null,
        customer_id text null,
        amount_cents bigint not null check (amount_cents > 0),
        status text not null check (status in ('open', 'paid', 'expired')),
        success_url text not null,
        cancel_url text not null,
        card_payment_method_id text null,
        card_brand text null,
        card_last4 text null,
        created_at timestamptz not null default now()
      )`);
    // the same idempotency key answers the same payment id, as a processor's would
    this.addSql(`
      create table manual_charges (
        idempotency_key text primary key,
        payment_id text not null,
        created_at timestamptz not null default now()
      )`);
  }

  override down(): void {
    this.addSql('drop table manual_charges');
    this.addSql('drop table manual_checkouts');
    this.addSql('drop table sandbox_offers');
    this.addSql('drop table sandbox_machines');
    this.addSql('drop sequence sandbox_machine_serial');
  }
}
