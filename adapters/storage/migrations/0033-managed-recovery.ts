import { Migration } from '@mikro-orm/migrations';

/**
 * Managed recovery (docs/decisions.md, "Managed recovery"): a row per instance that asked for one, holding what every
 * replacement of its chain must match (the first machine's GPUs, CPUs, RAM, disk and per-GPU rate), the options
 * each is rented with, and where the machine stands: watching, due (the reconciler found it lost, preempted or
 * failed), recovering (a runner took it up), recovered or failed.
 */
export class Migration0033ManagedRecovery extends Migration {
  override name = '0033-managed-recovery';

  override up(): void {
    this.addSql(`
      create table instance_recoveries (
        instance_id text primary key references instances (id),
        tenant_id text not null references tenants (id),
        status text not null check (status in ('watching', 'due', 'recovering', 'recovered', 'failed')),
        max_attempts integer not null check (max_attempts between 1 and 10),
        attempts_left integer not null check (attempts_left between 0 and max_attempts),
        gpu_type text not null,
        gpu_count integer not null check (gpu_count between 1 and 64),
        min_cpus integer not null check (min_cpus >= 0),
        min_ram_gb double precision not null check (min_ram_gb >= 0),
        min_disk_gb double precision not null check (min_disk_gb >= 0),
        ceiling_per_gpu_cents bigint not null check (ceiling_per_gpu_cents >= 0),
        options jsonb not null,
        provider text not null,
        region text null,
        replaces text null references instances (id),
        replaced_by text null references instances (id),
        left_volume_ids text[] not null default '{}',
        failure text null,
        due_at timestamptz null,
        claimed_at timestamptz null,
        created_at timestamptz not null,
        check (status <> 'recovered' or replaced_by is not null),
        check (status <> 'failed' or failure is not null)
      )`);
    // one replacement per machine, whoever rents it
    this.addSql(`create unique index instance_recoveries_replaces on instance_recoveries (replaces) where replaces is not null`);
    // the sweep's step reads only those waiting for a runner
    this.addSql(`create index instance_recoveries_due on instance_recoveries (due_at, instance_id) where status in ('due', 'recovering')`);
    // the sandbox takes on-demand machines back too (a host reclaimed), so recovery after a preemption can be rehearsed
    this.addSql(`alter table sandbox_machines drop constraint sandbox_machines_preempt_needs_bid`);
  }
}
