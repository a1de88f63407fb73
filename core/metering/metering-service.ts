import { accountFigures } from '../billing/account-view.ts';
import type { Granularity } from '../billing/periods.ts';
import { DomainError, invalidInput, notFound } from '../errors.ts';
import type { Cents } from '../money.ts';
import type { Clock } from '../ports/clock.ts';
import type { Ids } from '../ports/ids.ts';
import type { Storage, UnitOfWork } from '../ports/storage.ts';
import { MICROS_PER_UNIT, parseDecimal } from './decimal.ts';
import { KIND_PATTERN, parseUnitPrice, VOLUME_STORAGE, VOLUME_STORAGE_UNIT, type PriceList } from './prices.ts';
import { IngestBatcher } from './ingest-batcher.ts';
import { usagePeriods, type UsagePeriod } from './usage-periods.ts';
import type { NewUsage, Settlement, StoredUsage, UsageFilter, UsageRecord } from './usage.ts';

export const USAGE_ID_PREFIX = 'usg';
/** A record's quantity: > 0, at most 1e9, at most 6 decimals. */
export const MAX_QUANTITY_MICROS = 1_000_000_000n * MICROS_PER_UNIT;

/** Records ingested at once leave together, up to this many in one call, at most this many calls at a time. */
const MAX_BATCH = 100;
const MAX_BATCHES_IN_FLIGHT = 2;

export const parseQuantity = (input: unknown) => parseDecimal(input, { maxMicros: MAX_QUANTITY_MICROS });

/** A tenant's services report usage (POST /v1/metering/usage): priced from the price list alone. */
export interface UsageIngest {
  resourceKind: string;
  quantity: string | number;
  idempotencyKey: string | null;
  startedAt: Date | null;
  endedAt: Date | null;
  reference: string | null;
}

/** The control plane meters something itself (the sweep, each volume's storage hour) at the price it names. */
export interface SystemUsage {
  tenantId: string;
  /** `volume_storage`, or a kind of the price list. */
  kind: string;
  /** Exact decimal: > 0, at most 1e9, at most 6 decimals. */
  quantity: string | number;
  /** Exact decimal USD per unit: > 0, at most 1000, at most 6 decimals. */
  unitPriceUsd: string | number;
  reference: string | null;
  /** Idempotency: a key recorded before answers that record and meters nothing (e.g. `volume:<id>:<hour>`). */
  uniqueKey: string;
  startedAt: Date;
  endedAt: Date | null;
}

export interface RecordedUsage {
  record: UsageRecord;
  /** false: the unique key was recorded before, and this is that record. */
  created: boolean;
}

export interface SettleOutcome extends Settlement {
  /** The account's owed_cents after settling: machines' overruns and the usage still unsettled. */
  remainingOwedCents: Cents;
}

/**
 * Metering (DESIGN.md §13): usage records priced exactly, one rounding per tenant and kind, counted in
 * owed_cents until settled to the ledger, once each, oldest first while the balance covers them.
 */
export class MeteringService {
  private readonly storage: Storage;
  private readonly clock: Clock;
  private readonly ids: Ids;
  private readonly batcher: IngestBatcher;
  readonly prices: PriceList;

  constructor(deps: { storage: Storage; clock: Clock; ids: Ids; prices: PriceList }) {
    this.storage = deps.storage;
    this.clock = deps.clock;
    this.ids = deps.ids;
    this.prices = deps.prices;
    this.batcher = new IngestBatcher(deps.storage, { maxBatch: MAX_BATCH, maxInFlight: MAX_BATCHES_IN_FLIGHT });
  }

  /** Ingests a tenant's record; the same idempotency key and body answer the first record (`replayed`), another body 409. */
  async ingest(tenantId: string, usage: UsageIngest): Promise<{ record: UsageRecord; replayed: boolean }> {
    const price = this.prices.get(usage.resourceKind);
    if (!price) throw invalidInput(['body', 'resource_kind'], this.unknownKind(usage.resourceKind));
    const quantity = parseQuantity(usage.quantity);
    if (!quantity.ok) throw invalidInput(['body', 'quantity'], quantity.reason);
    if (usage.startedAt && usage.endedAt && usage.endedAt.getTime() < usage.startedAt.getTime()) {
      throw invalidInput(['body', 'ended_at'], 'must not be before started_at');
    }
    const request = JSON.stringify({
      resource_kind: usage.resourceKind,
      quantity: quantity.text,
      started_at: usage.startedAt?.toISOString() ?? null,
      ended_at: usage.endedAt?.toISOString() ?? null,
      reference: usage.reference,
    });
    const id = this.ids.newId(USAGE_ID_PREFIX);
    const uniqueKey = usage.idempotencyKey === null ? `rec:${id}` : `key:${usage.idempotencyKey}`;
    if (usage.idempotencyKey !== null) {
      const before = await this.storage.read((uow) => uow.usage.byUniqueKey(tenantId, uniqueKey));
      if (before) return { record: this.replay(before, request), replayed: true };
    }
    const now = this.clock.now();
    const recorded = await this.append(null, {
      id,
      tenantId,
      resourceKind: usage.resourceKind,
      quantity: quantity.text,
      unit: price.unit,
      unitPriceUsd: price.usdPerUnit,
      // a point in time when only one end is known; "now" when neither is
      startedAt: usage.startedAt ?? usage.endedAt ?? now,
      endedAt: usage.endedAt,
      reference: usage.reference,
      uniqueKey,
      request,
      createdAt: now,
    });
    return recorded.created ? { record: recorded.record, replayed: false } : { record: this.replay(recorded.record, request), replayed: true };
  }

  /**
   * Meters usage for the control plane itself, at the unit price it names, in the caller's unit of work
   * (`uow`) or in a transaction of its own (null). Idempotent on `uniqueKey`: two sweeps never bill one
   * volume-hour twice. A bad argument is a bug in the caller: RangeError.
   */
  async record(uow: UnitOfWork | null, usage: SystemUsage): Promise<RecordedUsage> {
    const unit = usage.kind === VOLUME_STORAGE ? VOLUME_STORAGE_UNIT : this.prices.get(usage.kind)?.unit;
    if (!KIND_PATTERN.test(usage.kind) || unit === undefined) throw new RangeError(`metering: ${this.unknownKind(usage.kind)}`);
    const quantity = parseQuantity(usage.quantity);
    if (!quantity.ok) throw new RangeError(`metering: quantity ${quantity.reason}`);
    const price = parseUnitPrice(usage.unitPriceUsd);
    if (!price.ok) throw new RangeError(`metering: unitPriceUsd ${price.reason}`);
    if (usage.uniqueKey.length === 0 || usage.uniqueKey.length > 300) throw new RangeError('metering: uniqueKey must have 1 to 300 characters');
    if (usage.endedAt && usage.endedAt.getTime() < usage.startedAt.getTime()) throw new RangeError('metering: endedAt is before startedAt');
    return this.append(uow, {
      id: this.ids.newId(USAGE_ID_PREFIX),
      tenantId: usage.tenantId,
      resourceKind: usage.kind,
      quantity: quantity.text,
      unit,
      unitPriceUsd: price.text,
      startedAt: usage.startedAt,
      endedAt: usage.endedAt,
      reference: usage.reference,
      uniqueKey: `sys:${usage.uniqueKey}`,
      request: null,
      createdAt: this.clock.now(),
    });
  }

  list(tenantId: string, filter: UsageFilter): Promise<UsageRecord[]> {
    if (filter.since && filter.until && filter.since.getTime() > filter.until.getTime()) throw invalidInput(['query', 'until'], 'must not be before since');
    return this.storage.read((uow) => uow.usage.list(tenantId, filter));
  }

  async summary(tenantId: string, granularity: Granularity, options: { year?: number; limit: number }): Promise<UsagePeriod[]> {
    const rows = await this.storage.read((uow) => uow.usage.periods(tenantId, granularity, options.year));
    return usagePeriods(rows, granularity, options.limit);
  }

  /** Settles the tenant's unsettled records, oldest first, while the balance covers each. */
  async settle(tenantId: string): Promise<SettleOutcome> {
    return this.storage.transaction(async (uow) => {
      const now = this.clock.now();
      const settled = await uow.usage.settle(now, tenantId);
      const account = await uow.accounts.get(tenantId);
      if (!account) throw notFound(`tenant ${tenantId}`);
      const figures = accountFigures(account.balanceCents, await uow.instances.live(tenantId), now, {
        stopsAt: false,
        unsettledUsageCents: await uow.usage.unsettledCents(tenantId),
      });
      return { ...settled, remainingOwedCents: figures.owedCents };
    });
  }

  /** The sweep's step: every tenant's unsettled records, in one set-based pass. */
  settleAll(): Promise<Settlement> {
    return this.storage.transaction((uow) => uow.usage.settle(this.clock.now()));
  }

  private async append(uow: UnitOfWork | null, usage: NewUsage): Promise<{ record: UsageRecord; created: true } | { record: StoredUsage; created: false }> {
    // in the caller's transaction, or (one atomic call, no transaction needed) with the records that arrive at once
    const added = uow ? await uow.usage.add(usage) : await this.batcher.add(usage);
    if (added) return { record: added, created: true };
    const before = await (uow ? uow.usage.byUniqueKey(usage.tenantId, usage.uniqueKey) : this.storage.read((u) => u.usage.byUniqueKey(usage.tenantId, usage.uniqueKey)));
    if (!before) throw notFound(`tenant ${usage.tenantId}`);
    return { record: before, created: false };
  }

  /** The first record of an idempotency key, if the retry asks for the same; else a conflict. */
  private replay(before: StoredUsage, request: string): UsageRecord {
    if (before.request !== request) {
      throw new DomainError('CONFLICT', 'this idempotency_key was used for another usage record with a different body; use a new key for new usage');
    }
    return before;
  }

  private unknownKind(kind: string): string {
    const known = [...this.prices.keys()].sort();
    if (kind === VOLUME_STORAGE) return `${VOLUME_STORAGE} is metered by the control plane itself (each volume's storage, hourly)${known.length ? `; the kinds you can report: ${known.join(', ')}` : ''}`;
    const shown = kind.length > 64 ? `${kind.slice(0, 64)}…` : kind;
    return known.length ? `unknown kind "${shown}"; the price list has: ${known.join(', ')}` : `unknown kind "${shown}"; no kinds are priced on this server (METERED_PRICES is empty)`;
  }
}
