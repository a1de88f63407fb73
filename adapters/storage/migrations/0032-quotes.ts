import { Migration } from '@mikro-orm/migrations';

/**
 * Quotes (docs/decisions.md, "Rent by specification and quotes"): a rental priced for a tenant, rentable once
 * within its validity at no more than its rate. Unused ones are deleted a while after they expire.
 */
export class Migration0032Quotes extends Migration {
  override name = '0032-quotes';

  override up(): void {
    this.addSql(`
      create table quotes (
        id text primary key,
        tenant_id text not null references tenants (id),
        token_id text not null references tokens (id),
        node_id text not null,
        search jsonb null,
        termination_hours integer null check (termination_hours between 1 and 8760),
        name text null,
        rate_cents_per_hour bigint not null check (rate_cents_per_hour >= 0),
        per_gpu_cents bigint not null check (per_gpu_cents >= 0),
        charged_now_cents bigint not null check (charged_now_cents >= 0),
        commitment_cents bigint not null check (commitment_cents >= 0),
        cap_remaining_after_cents bigint null,
        created_at timestamptz not null,
        expires_at timestamptz not null check (expires_at > created_at),
        instance_id text null references instances (id)
      )`);
    // what a new quote of the tenant deletes: its unused quotes long expired
    this.addSql(`create index quotes_expired on quotes (tenant_id, expires_at) where instance_id is null`);
  }
}
