import { Migration } from '@mikro-orm/migrations';

export class Migration0003AccountsLedgerInstances extends Migration {
  override name = '0003-accounts-ledger-instances';

  override up(): void {
    this.addSql(`
      create table accounts (
        tenant_id text primary key references tenants (id),
        balance_cents bigint not null default 0,
        pause_kind text null check (pause_kind in ('emergency_stop', 'breaker', 'hold')),
        pause_reason text null,
        paused_at timestamptz null,
        max_burn_cents_per_hour bigint null check (max_burn_cents_per_hour is null or max_burn_cents_per_hour > 0),
        created_at timestamptz not null
      )`);
    // Append-only: entries are inserted, never changed or removed; unique_key makes a double posting impossible.
    this.addSql(`
      create table ledger_entries (
        id text primary key,
        tenant_id text not null references accounts (tenant_id),
        seq bigserial not null,
        kind text not null,
        amount_cents bigint not null,
        balance_after_cents bigint not null,
        reference text null,
        description text null,
        unique_key text not null unique,
        created_at timestamptz not null
      )`);
    this.addSql(`create index ledger_entries_tenant on ledger_entries (tenant_id, seq)`);
    this.addSql(`
      create function ledger_is_append_only() returns trigger language plpgsql as $$
      begin
        raise exception 'ledger entries are append-only';
      end $$`);
    this.addSql(`
      create trigger ledger_append_only before update or delete on ledger_entries
        for each row execute function ledger_is_append_only()`);
    this.addSql(`
      create table deposits (
        id text primary key,
        tenant_id text not null references accounts (tenant_id),
        kind text not null check (kind in ('bank_transfer', 'checkout', 'credit')),
        status text not null check (status in ('pending', 'confirmed', 'rejected', 'expired')),
        amount_cents bigint not null check (amount_cents > 0),
        reference text null,
        reason text null,
        created_at timestamptz not null,
        decided_at timestamptz null
      )`);
    this.addSql(`create index deposits_status on deposits (status, created_at)`);
    this.addSql(`create index deposits_tenant on deposits (tenant_id, created_at)`);
    this.addSql(`
      create table instances (
        id text primary key,
        tenant_id text not null references accounts (tenant_id),
        token_id text not null references tokens (id),
        node_id text not null,
        provider text not null,
        offer_id text not null,
        name text null,
        status text not null check (status in ('provisioning', 'running', 'rebooting', 'terminating', 'terminated', 'failed')),
        gpu_type text not null,
        gpu_count integer not null,
        rate_cents_per_hour bigint not null check (rate_cents_per_hour >= 0),
        created_at timestamptz not null,
        started_at timestamptz null,
        paid_until timestamptz not null,
        removal_scheduled_at timestamptz null,
        window_ends_at timestamptz null,
        terminated_at timestamptz null,
        machine_id text null,
        ssh_host text null,
        ssh_port integer null,
        idempotency_key text null,
        request_digest text null,
        charged_cents bigint not null default 0,
        commitment_cents bigint not null default 0,
        last_seen_at timestamptz null
      )`);
    this.addSql(`create unique index instances_idempotency on instances (tenant_id, idempotency_key) where idempotency_key is not null`);
    this.addSql(`create index instances_tenant on instances (tenant_id, created_at)`);
    this.addSql(`create index instances_live on instances (paid_until) where status in ('provisioning', 'running', 'rebooting', 'terminating')`);
  }
}
