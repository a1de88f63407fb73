import { Migration } from '@mikro-orm/migrations';

export class Migration0030TokenBurnCeilings extends Migration {
  override name = '0030-token-burn-ceilings';

  override up(): void {
    // the most what runs under a token may cost an hour (docs/decisions.md, "Burn ceilings")
    this.addSql(`alter table tokens add column max_burn_cents_per_hour bigint null check (max_burn_cents_per_hour > 0)`);
    // the spend gate sums what burns in the tenant in every gated transaction under a ceiling: the few machines and
    // volumes that bill now, not every one the tenant ever had
    this.addSql(`create index instances_burning on instances (tenant_id) where status in ('provisioning', 'running', 'rebooting')`);
    this.addSql(`create index volumes_burning on volumes (tenant_id) where status in ('creating', 'available', 'attached')`);
  }
}
