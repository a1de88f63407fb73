import { Migration } from '@mikro-orm/migrations';

/**
 * Spot claims: interruptible capacity at a bid, kept until released or its hours end, each of its
 * machines rented through the rental path. Instances gain their minimum charge (60 minutes on demand, 0 for spot:
 * billed by the started minute) and when their machine was preempted.
 */
export class Migration0015SpotClaims extends Migration {
  override name = '0015-spot-claims';

  override up(): void {
    this.addSql(`alter table instances add column minimum_minutes integer not null default 60 check (minimum_minutes between 0 and 60)`);
    this.addSql(`alter table instances add column preempted_at timestamptz null`);
    this.addSql(`
      create table spot_claims (
        id text primary key,
        tenant_id text not null references tenants (id),
        token_id text not null references tokens (id),
        name text not null,
        status text not null check (status in ('pending', 'active', 'released', 'expired')),
        node_id text null,
        search jsonb null,
        gpu_type text null,
        gpu_count integer not null check (gpu_count between 1 and 64),
        bid_cents_per_gpu_hour bigint not null check (bid_cents_per_gpu_hour > 0),
        hours integer null check (hours between 1 and 720),
        ends_at timestamptz null,
        commitment_cents bigint not null check (commitment_cents >= 0),
        template_id text null,
        ssh_key_id text null,
        instance_id text null references instances (id),
        machines integer not null default 0 check (machines >= 0),
        preemptions integer not null default 0 check (preemptions >= 0),
        ended_charged_cents bigint not null default 0 check (ended_charged_cents >= 0),
        last_error text null,
        claimed_at timestamptz null,
        created_at timestamptz not null,
        ended_at timestamptz null,
        check ((node_id is null) <> (search is null)),
        check ((hours is null) = (ends_at is null)),
        check (status <> 'active' or instance_id is not null)
      )`);
    this.addSql(`create index spot_claims_tenant on spot_claims (tenant_id, created_at)`);
    // the sweep's step reads only claims still open
    this.addSql(`create index spot_claims_open on spot_claims (id) where status in ('pending', 'active')`);
    this.addSql(`create unique index spot_claims_instance on spot_claims (instance_id) where instance_id is not null`);
  }
}
