import { Migration } from '@mikro-orm/migrations';

/** Outbound webhooks: the event outbox, tenants' endpoints, and one row per delivery attempt. */
export class Migration0017Webhooks extends Migration {
  override name = '0017-webhooks';

  override up(): void {
    // written in the transaction of the change it tells, when some endpoint listens to it
    this.addSql(`
      create table webhook_events (
        id text primary key,
        tenant_id text not null references tenants (id),
        type text not null,
        data jsonb not null,
        created_at timestamptz not null
      )`);
    this.addSql(`create index webhook_events_tenant on webhook_events (tenant_id, created_at)`);
    this.addSql(`
      create table webhook_endpoints (
        id text primary key,
        tenant_id text not null references tenants (id),
        url text not null,
        events text[] null,
        description text null,
        secret_sealed text not null,
        created_at timestamptz not null,
        deleted_at timestamptz null,
        failing_since timestamptz null,
        disabled_at timestamptz null,
        disabled_reason text null,
        check ((disabled_at is null) = (disabled_reason is null))
      )`);
    this.addSql(`create index webhook_endpoints_tenant on webhook_endpoints (tenant_id, created_at) where deleted_at is null`);
    // each row is one attempt, made or scheduled: a failed attempt schedules the next as a new row
    this.addSql(`
      create table webhook_deliveries (
        id text primary key,
        endpoint_id text not null references webhook_endpoints (id),
        event_id text not null references webhook_events (id),
        attempt integer not null check (attempt >= 1),
        status text not null check (status in ('pending', 'sending', 'succeeded', 'failed', 'abandoned')),
        response_status integer null,
        error text null,
        next_attempt_at timestamptz null,
        claimed_until timestamptz null,
        created_at timestamptz not null,
        attempted_at timestamptz null,
        unique (endpoint_id, event_id, attempt)
      )`);
    this.addSql(`create index webhook_deliveries_endpoint on webhook_deliveries (endpoint_id, created_at)`);
    // the workers' claim reads only attempts still to make
    // balance.low is told once per fall: set when told, cleared when funds are back
    this.addSql(`alter table accounts add column balance_low_at timestamptz null`);
    this.addSql(`create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status in ('pending', 'sending')`);
  }
}
