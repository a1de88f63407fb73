import { Migration } from '@mikro-orm/migrations';

export class Migration0018MarketSnapshots extends Migration {
  override name = '0018-market-snapshots';

  override up(): void {
    // One row per provider: the offers every replica serves, and the lease on its next refresh.
    this.addSql(`
      create table market_snapshots (
        provider text primary key,
        generation bigint not null default 0,
        offers jsonb null,
        fetched_at timestamptz null,
        refresh_started_at timestamptz null,
        lease_until timestamptz null,
        last_error text null
      )`);
  }
}
