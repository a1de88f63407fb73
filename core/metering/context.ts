import { notFound } from '../errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { Ids } from '../ports/ids.ts';
import type { Storage, UnitOfWork } from '../ports/storage.ts';
import type { IngestBatcher } from './ingest-batcher.ts';
import { VOLUME_STORAGE, type PriceList } from './prices.ts';
import type { NewUsage, StoredUsage, UsageRecord } from './usage.ts';

export const USAGE_ID_PREFIX = 'usg';

/** What the metering use cases work with: our records, the clock, ids, the price list and the ingest batcher. */
export interface MeteringContext {
  storage: Storage;
  clock: Clock;
  ids: Ids;
  prices: PriceList;
  /** Records ingested at once leave together (core/metering/ingest-batcher.ts). */
  batcher: IngestBatcher;
}

/**
 * Adds a record once: in the caller's transaction (`uow`), or (one atomic call, no transaction needed) with the
 * records that arrive at once. A unique key recorded before answers that record, `created: false`.
 */
export async function appendUsage(
  ctx: MeteringContext,
  uow: UnitOfWork | null,
  usage: NewUsage,
): Promise<{ record: UsageRecord; created: true } | { record: StoredUsage; created: false }> {
  const added = uow ? await uow.usage.add(usage) : await ctx.batcher.add(usage);
  if (added) return { record: added, created: true };
  const before = await (uow ? uow.usage.byUniqueKey(usage.tenantId, usage.uniqueKey) : ctx.storage.read((u) => u.usage.byUniqueKey(usage.tenantId, usage.uniqueKey)));
  if (!before) throw notFound(`tenant ${usage.tenantId}`);
  return { record: before, created: false };
}

/** Why a kind cannot be metered, naming the kinds that can. */
export function unknownKind(prices: PriceList, kind: string): string {
  const known = [...prices.keys()].sort();
  if (kind === VOLUME_STORAGE) return `${VOLUME_STORAGE} is metered by the control plane itself (each volume's storage, hourly)${known.length ? `; the kinds you can report: ${known.join(', ')}` : ''}`;
  const shown = kind.length > 64 ? `${kind.slice(0, 64)}…` : kind;
  return known.length ? `unknown kind "${shown}"; the price list has: ${known.join(', ')}` : `unknown kind "${shown}"; no kinds are priced on this server (METERED_PRICES is empty)`;
}
