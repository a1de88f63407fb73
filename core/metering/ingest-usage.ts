import { DomainError, invalidInput } from '../errors.ts';
import { appendUsage, unknownKind, USAGE_ID_PREFIX, type MeteringContext } from './context.ts';
import { parseQuantity } from './quantity.ts';
import type { StoredUsage, UsageRecord } from './usage.ts';

/** A tenant's services report usage (POST /v1/metering/usage): priced from the price list alone. */
export interface UsageIngest {
  resourceKind: string;
  quantity: string | number;
  idempotencyKey: string | null;
  startedAt: Date | null;
  endedAt: Date | null;
  reference: string | null;
}

/** Ingests a tenant's record; the same idempotency key and body answer the first record (`replayed`), another body 409. */
export async function ingestUsage(ctx: MeteringContext, tenantId: string, usage: UsageIngest): Promise<{ record: UsageRecord; replayed: boolean }> {
  const price = ctx.prices.get(usage.resourceKind);
  if (!price) throw invalidInput(['body', 'resource_kind'], unknownKind(ctx.prices, usage.resourceKind));
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
  const id = ctx.ids.newId(USAGE_ID_PREFIX);
  const uniqueKey = usage.idempotencyKey === null ? `rec:${id}` : `key:${usage.idempotencyKey}`;
  if (usage.idempotencyKey !== null) {
    const before = await ctx.storage.read((uow) => uow.usage.byUniqueKey(tenantId, uniqueKey));
    if (before) return { record: replay(before, request), replayed: true };
  }
  const now = ctx.clock.now();
  const recorded = await appendUsage(ctx, null, {
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
  return recorded.created ? { record: recorded.record, replayed: false } : { record: replay(recorded.record, request), replayed: true };
}

/** The first record of an idempotency key, if the retry asks for the same; else a conflict. */
function replay(before: StoredUsage, request: string): UsageRecord {
  if (before.request !== request) {
    throw new DomainError('CONFLICT', 'this idempotency_key was used for another usage record with a different body; use a new key for new usage');
  }
  return before;
}
