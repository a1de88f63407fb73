import { Migration } from '@mikro-orm/migrations';

export class Migration0014Reservations extends Migration {
  override name = '0014-reservations';

  override up(): void {
    this.addSql(`
      create table reservations (
        id text primary key,
        tenant_id text not null references tenants (id),
        token_id text not null references tokens (id),
        name text not null,
        status text not null check (status in ('scheduled', 'starting', 'active', 'failed', 'cancelled')),
        starts_at timestamptz not null,
        hours integer not null check (hours between 1 and 720),
        ends_at timestamptz not null check (ends_at > starts_at),
        node_id text null,
        search jsonb null,
        gpu_type text not null,
        gpu_count integer not null check (gpu_count >= 1),
        quoted_per_gpu_cents bigint not null check (quoted_per_gpu_cents >= 0),
        max_price_per_gpu_cents bigint null check (max_price_per_gpu_cents >= 0),
        rate_cents_per_hour bigint not null check (rate_cents_per_hour >= 0),
        commitment_cents bigint not null check (commitment_cents >= 0),
        template_id text null,
        ssh_key_id text null,
        idempotency_key text null,
        request_digest text not null,
        instance_id text null references instances (id),
        failure text null,
        claimed_at timestamptz null,
        created_at timestamptz not null,
        check ((node_id is null) <> (search is null)),
        check (status <> 'active' or instance_id is not null)
      )`);
    this.addSql(`create index reservations_tenant on reservations (tenant_id, created_at)`);
    this.addSql(`create unique index reservations_idempotency on reservations (tenant_id, idempotency_key) where idempotency_key is not null`);
    // the sweep's step reads only reservations still to start
    this.addSql(`create index reservations_to_start on reservations (starts_at, id) where status in ('scheduled', 'starting')`);
    this.addSql(`create unique index reservations_instance on reservations (instance_id) where instance_id is not null`);
    // a rental made for something (a reservation) names it in the description of each of its ledger entries
    this.addSql(`alter table instances add column ledger_note text null`);
  }
}
