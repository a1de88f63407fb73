import { Migration } from '@mikro-orm/migrations';

/**
 * The sandbox's simulated spot market: a spot price a test pinned on an offer, and each spot machine's bid and
 * foreseen preemption. Prices walk from the seed, so only what a knob changed is kept; every process on the
 * database sees the same preemptions. Only the sandbox adapter reads these columns.
 */
export class Migration0016SandboxSpotMarket extends Migration {
  override name = '0016-sandbox-spot-market';

  override up(): void {
    this.addSql('alter table sandbox_offers add column spot_price_usd_per_hour text null');
    // the bid in 1/10000 USD per hour, as the sandbox keeps prices; null for an on-demand machine
    this.addSql(`
      alter table sandbox_machines
        add column spot_bid_units bigint null check (spot_bid_units >= 0),
        add column preempt_at_ms bigint null,
        add constraint sandbox_machines_preempt_needs_bid check (preempt_at_ms is null or spot_bid_units is not null)`);
    this.addSql('create index sandbox_machines_live_spot on sandbox_machines (offer_id) where terminated_at_ms is null and spot_bid_units is not null');
  }

  override down(): void {
    this.addSql('drop index sandbox_machines_live_spot');
    this.addSql('alter table sandbox_machines drop constraint sandbox_machines_preempt_needs_bid, drop column preempt_at_ms, drop column spot_bid_units');
    this.addSql('alter table sandbox_offers drop column spot_price_usd_per_hour');
  }
}
