import type { Granularity } from '../billing/periods.ts';
import { invalidInput } from '../errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { Ids } from '../ports/ids.ts';
import type { Storage, UnitOfWork } from '../ports/storage.ts';
import type { MeteringContext } from './context.ts';
import { IngestBatcher } from './ingest-batcher.ts';
import { ingestUsage, type UsageIngest } from './ingest-usage.ts';
import type { PriceList } from './prices.ts';
import { recordSystemUsage, type RecordedUsage, type SystemUsage } from './record-system-usage.ts';
import { settleAllUsage, settleTenantUsage, type SettleOutcome } from './settle-usage.ts';
import { usagePeriods, type UsagePeriod } from './usage-periods.ts';
import type { Settlement, UsageFilter, UsageRecord } from './usage.ts';

/** Records ingested at once leave together, up to this many in one call, at most this many calls at a time. */
const MAX_BATCH = 100;
const MAX_BATCHES_IN_FLIGHT = 2;

/**
 * Metering (docs/decisions.md, "Metering"): usage records priced exactly, one rounding per tenant and kind, counted in
 * owed_cents until settled to the ledger, once each, oldest first while the balance covers them. Each use case is a
 * file of core/metering; this object holds the ingest batcher, hands them what they work with, and answers the plain
 * reads itself.
 */
export class MeteringService {
  private readonly context: MeteringContext;
  readonly prices: PriceList;

  constructor(deps: { storage: Storage; clock: Clock; ids: Ids; prices: PriceList }) {
    this.prices = deps.prices;
    const batcher = new IngestBatcher(deps.storage, { maxBatch: MAX_BATCH, maxInFlight: MAX_BATCHES_IN_FLIGHT });
    this.context = { storage: deps.storage, clock: deps.clock, ids: deps.ids, prices: deps.prices, batcher };
  }

  ingest(tenantId: string, usage: UsageIngest): Promise<{ record: UsageRecord; replayed: boolean }> {
    return ingestUsage(this.context, tenantId, usage);
  }

  record(uow: UnitOfWork | null, usage: SystemUsage): Promise<RecordedUsage> {
    return recordSystemUsage(this.context, uow, usage);
  }

  list(tenantId: string, filter: UsageFilter): Promise<UsageRecord[]> {
    if (filter.since && filter.until && filter.since.getTime() > filter.until.getTime()) throw invalidInput(['query', 'until'], 'must not be before since');
    return this.context.storage.read((uow) => uow.usage.list(tenantId, filter));
  }

  async summary(tenantId: string, granularity: Granularity, options: { year?: number; limit: number }): Promise<UsagePeriod[]> {
    const rows = await this.context.storage.read((uow) => uow.usage.periods(tenantId, granularity, options.year));
    return usagePeriods(rows, granularity, options.limit);
  }

  settle(tenantId: string): Promise<SettleOutcome> {
    return settleTenantUsage(this.context, tenantId);
  }

  settleAll(): Promise<Settlement> {
    return settleAllUsage(this.context);
  }
}
