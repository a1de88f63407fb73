import { Migration } from '@mikro-orm/migrations';

export class Migration0002MarketSummary extends Migration {
  override name = '0002-market-summary';

  override up(): void {
    // One row: the summary every replica serves, and the lease on its next refresh.
    this.addSql(`
      create table market_summary (
        id text primary key check (id = 'market'),
        summary jsonb null,
        built_at timestamptz null,
        refresh_started_at timestamptz null,
        lease_until timestamptz null,
        last_error text null
      )`);
    this.addSql(`insert into market_summary (id) values ('market')`);
  }
}
