import type { UnitOfWork } from '../ports/storage.ts';
import { appendUsage, unknownKind, USAGE_ID_PREFIX, type MeteringContext } from './context.ts';
import { KIND_PATTERN, parseUnitPrice, VOLUME_STORAGE, VOLUME_STORAGE_UNIT } from './prices.ts';
import { parseQuantity } from './quantity.ts';
import type { UsageRecord } from './usage.ts';

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

/**
 * Meters usage for the control plane itself, at the unit price it names, in the caller's unit of work (`uow`) or in a
 * transaction of its own (null). Idempotent on `uniqueKey`: two sweeps never bill one volume-hour twice. A bad
 * argument is a bug in the caller: RangeError.
 */
export async function recordSystemUsage(ctx: MeteringContext, uow: UnitOfWork | null, usage: SystemUsage): Promise<RecordedUsage> {
  const unit = usage.kind === VOLUME_STORAGE ? VOLUME_STORAGE_UNIT : ctx.prices.get(usage.kind)?.unit;
  if (!KIND_PATTERN.test(usage.kind) || unit === undefined) throw new RangeError(`metering: ${unknownKind(ctx.prices, usage.kind)}`);
  const quantity = parseQuantity(usage.quantity);
  if (!quantity.ok) throw new RangeError(`metering: quantity ${quantity.reason}`);
  const price = parseUnitPrice(usage.unitPriceUsd);
  if (!price.ok) throw new RangeError(`metering: unitPriceUsd ${price.reason}`);
  if (usage.uniqueKey.length === 0 || usage.uniqueKey.length > 300) throw new RangeError('metering: uniqueKey must have 1 to 300 characters');
  if (usage.endedAt && usage.endedAt.getTime() < usage.startedAt.getTime()) throw new RangeError('metering: endedAt is before startedAt');
  return appendUsage(ctx, uow, {
    id: ctx.ids.newId(USAGE_ID_PREFIX),
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
    createdAt: ctx.clock.now(),
  });
}
