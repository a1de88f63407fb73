import { Migration } from '@mikro-orm/migrations';

export class Migration0028MarketPriceHistory extends Migration {
  override name = '0028-market-price-history';

  override up(): void {
    // a row per GPU family, provider and hour, bounded by families x providers x 90 days whatever the number of
    // offers (docs/decisions.md, "Price history"); read by family over a range of hours
    this.addSql(`
      create table market_price_history (
        gpu_type text not null,
        provider text not null,
        hour timestamptz not null,
        min_per_gpu_cents bigint not null check (min_per_gpu_cents >= 0),
        median_per_gpu_cents bigint not null check (median_per_gpu_cents >= min_per_gpu_cents),
        available_gpus bigint not null check (available_gpus >= 0),
        primary key (gpu_type, hour, provider)
      )`);
    // what prune deletes: the hours past the 90 days kept
    this.addSql(`create index market_price_history_hour on market_price_history (hour)`);
  }
}
