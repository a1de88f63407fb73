import { invalidInput } from '../errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { PriceHistoryStore, PricePoint } from '../ports/price-history.ts';
import { gpuFamily } from './gpu-family.ts';
import type { MarketNode } from './node.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** How long the market remembers prices. */
export const HISTORY_DAYS = 90;
/** The most points one answer may hold: a wider range is refused with what to narrow. */
export const MAX_POINTS = 2_000;

export type Granularity = 'hour' | 'day';

/** One GPU family at one provider in one hour (or day): the store's shape, named here too for those who read the history. */
export type { PricePoint };

const hourOf = (at: Date): Date => new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS);
const dayOf = (at: Date): Date => new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);

/** The lower middle of the values: the middle one of an odd count, the lower of the two middle ones of an even count. */
export function lowerMedian(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('no values');
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

/**
 * A provider's snapshot as the hour's points, one per GPU family: the verified offers that can be rented now
 * (an estimate or an offer with nothing available is no market price), their lowest and lower-median per-GPU
 * price, and the GPUs they make available.
 */
export function pointsOf(provider: string, nodes: readonly MarketNode[], fetchedAt: Date): PricePoint[] {
  const byFamily = new Map<string, { prices: number[]; gpus: number }>();
  for (const node of nodes) {
    const { offer } = node;
    if (!offer.priceVerified || offer.available <= 0) continue;
    const family = byFamily.get(offer.gpuType) ?? byFamily.set(offer.gpuType, { prices: [], gpus: 0 }).get(offer.gpuType)!;
    family.prices.push(node.perGpuCents);
    family.gpus += offer.available * offer.gpuCount;
  }
  const at = hourOf(fetchedAt);
  return [...byFamily].map(([gpuType, { prices, gpus }]) => ({
    gpuType,
    provider,
    at,
    minPerGpuCents: Math.min(...prices),
    medianPerGpuCents: lowerMedian(prices),
    availableGpus: gpus,
  }));
}

/**
 * A provider's hourly points as daily ones: the day's lowest price, the lower median of its hourly medians, and the
 * GPUs available at its last recorded hour. `hours` are one provider's, oldest first.
 */
export function daysOf(hours: readonly PricePoint[]): PricePoint[] {
  const days: PricePoint[] = [];
  let medians: number[] = [];
  for (const hour of hours) {
    const at = dayOf(hour.at);
    const last = days[days.length - 1];
    if (last && last.at.getTime() === at.getTime() && last.provider === hour.provider) {
      medians.push(hour.medianPerGpuCents);
      last.minPerGpuCents = Math.min(last.minPerGpuCents, hour.minPerGpuCents);
      last.medianPerGpuCents = lowerMedian(medians);
      last.availableGpus = hour.availableGpus;
    } else {
      medians = [hour.medianPerGpuCents];
      days.push({ ...hour, at });
    }
  }
  return days;
}

export interface HistoryQuery {
  gpuType: string;
  provider: string | null;
  granularity: Granularity;
  since: Date | null;
  until: Date | null;
}

export interface History {
  gpuType: string;
  points: PricePoint[];
}

/**
 * Price history for people planning a rental (docs/decisions.md, "Price history"): each refresh of a provider's
 * offers records the hour's points (the hour's last snapshot wins), and asking reads them back by hour or by day.
 */
export class PriceHistory {
  private readonly store: PriceHistoryStore;
  private readonly clock: Clock;
  private readonly providers: readonly string[];
  private lastPrunedHour = 0;

  constructor(deps: { store: PriceHistoryStore; clock: Clock; providers: readonly string[] }) {
    this.store = deps.store;
    this.clock = deps.clock;
    this.providers = deps.providers;
  }

  /** Records a provider's fresh snapshot, and forgets what is older than the history keeps (once an hour). */
  async record(provider: string, nodes: readonly MarketNode[], fetchedAt: Date): Promise<void> {
    await this.store.record(pointsOf(provider, nodes, fetchedAt));
    const hour = hourOf(fetchedAt).getTime();
    if (hour !== this.lastPrunedHour) {
      this.lastPrunedHour = hour;
      await this.store.prune(new Date(hour - HISTORY_DAYS * DAY_MS));
    }
  }

  async history(query: HistoryQuery): Promise<History> {
    if (query.provider !== null && !this.providers.includes(query.provider)) {
      throw invalidInput(['query', 'provider'], `no provider "${query.provider}" here; enabled: ${this.providers.join(', ')}`);
    }
    const bucket = query.granularity === 'hour' ? HOUR_MS : DAY_MS;
    const until = query.until ?? this.clock.now();
    const since = query.since ?? new Date(until.getTime() - (query.granularity === 'hour' ? 7 * DAY_MS : HISTORY_DAYS * DAY_MS));
    if (since.getTime() >= until.getTime()) throw invalidInput(['query', 'since'], 'must be before until');
    const floor = query.granularity === 'hour' ? hourOf : dayOf;
    const buckets = Math.ceil((until.getTime() - floor(since).getTime()) / bucket);
    const providers = query.provider === null ? this.providers.length : 1;
    if (buckets * providers > MAX_POINTS) {
      throw invalidInput(
        ['query', 'since'],
        `this range could hold ${buckets * providers} points (${buckets} ${query.granularity}s x ${providers} provider${providers === 1 ? '' : 's'}), more than ${MAX_POINTS}; narrow it (since, until), name a provider, or ask by day`,
      );
    }
    const gpuType = gpuFamily(query.gpuType);
    const hours = await this.store.hours(gpuType, query.provider, floor(since), until);
    if (query.granularity === 'hour') return { gpuType, points: hours };
    // one provider's days after another's, then merged oldest first (ties by provider, as the hours come)
    const byProvider = new Map<string, PricePoint[]>();
    for (const hour of hours) (byProvider.get(hour.provider) ?? byProvider.set(hour.provider, []).get(hour.provider)!).push(hour);
    const points = [...byProvider.values()].flatMap(daysOf).sort((a, b) => a.at.getTime() - b.at.getTime() || (a.provider < b.provider ? -1 : a.provider > b.provider ? 1 : 0));
    return { gpuType, points };
  }
}
