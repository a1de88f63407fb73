import { DomainError, messageOf } from '../errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { Storage, StoredMarketSummary } from '../ports/storage.ts';
import type { MarketService } from './market-service.ts';
import { summarizeMarket, type MarketSummary } from './summary.ts';

export interface SummarySettings {
  /** A summary younger than this is served as is, and no refresh starts before it is this old. */
  cacheMs: number;
  /** After a failed refresh the last good summary is served, marked stale, until it is this old. */
  staleLimitMs: number;
  /** How long a replica's claim on a refresh lasts if it never reports back (it crashed). */
  leaseMs: number;
  /** Real time a caller waits for another replica's first summary before giving up. */
  waitMs: number;
  rentalsOpen: boolean;
}

export interface SummaryAnswer {
  summary: MarketSummary;
  updatedAt: Date;
  stale: boolean;
  rentalsOpen: boolean;
  /** Whole seconds until a refresh may replace this summary (for Cache-Control). */
  freshForSeconds: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The public market summary: one snapshot in storage that every replica serves, rebuilt at most once
 * per `cacheMs` by whichever replica claims the refresh first (single flight across replicas through
 * a lease in storage, and inside one replica through one shared promise).
 */
export class MarketSummaryService {
  private readonly market: MarketService;
  private readonly storage: Storage;
  private readonly clock: Clock;
  private readonly settings: SummarySettings;
  private inflight: Promise<void> | null = null;

  constructor(market: MarketService, storage: Storage, clock: Clock, settings: SummarySettings) {
    this.market = market;
    this.storage = storage;
    this.clock = clock;
    this.settings = settings;
  }

  async current(): Promise<SummaryAnswer> {
    let stored = await this.latest();
    if (stored && this.ageMs(stored) < this.settings.cacheMs) return this.answer(stored);
    await this.refresh();
    stored = (await this.latest()) ?? (await this.waitForAnotherReplica());
    if (!stored || this.ageMs(stored) > this.settings.staleLimitMs) {
      throw new DomainError(
        'MARKET_UNAVAILABLE',
        stored
          ? `no market has answered for ${Math.floor(this.ageMs(stored) / 60_000)} minutes; try again shortly`
          : 'no market has answered yet; try again shortly',
      );
    }
    return this.answer(stored);
  }

  /** Rebuilds the summary when this replica wins the claim; joins this replica's running refresh otherwise. */
  refresh(): Promise<void> {
    this.inflight ??= this.claimAndBuild().finally(() => {
      this.inflight = null;
    });
    return this.inflight;
  }

  private async claimAndBuild(): Promise<void> {
    const now = this.clock.now();
    const claimed = await this.storage.transaction((uow) =>
      uow.marketSummary.claimRefresh(now, new Date(now.getTime() - this.settings.cacheMs), new Date(now.getTime() + this.settings.leaseMs)),
    );
    if (!claimed) return;
    try {
      const views = await this.market.freshViews();
      const answered = views.filter((view) => view.ok);
      if (answered.length === 0) {
        const reasons = views.map((view) => `${view.provider}: ${view.error}`).join('; ');
        await this.storage.transaction((uow) => uow.marketSummary.failRefresh(reasons || 'no provider is enabled'));
        return;
      }
      const summary = summarizeMarket(answered.flatMap((view) => view.nodes));
      const builtAt = this.clock.now();
      await this.storage.transaction((uow) => uow.marketSummary.completeRefresh(summary, builtAt));
    } catch (error) {
      await this.storage.transaction((uow) => uow.marketSummary.failRefresh(messageOf(error)));
      throw error;
    }
  }

  /** Another replica claimed the very first refresh: wait (real time) for it to store a summary. */
  private async waitForAnotherReplica(): Promise<StoredMarketSummary | null> {
    const pollMs = 50;
    for (let waited = 0; waited < this.settings.waitMs; waited += pollMs) {
      if (!(await this.storage.read((uow) => uow.marketSummary.refreshRunning(this.clock.now())))) break;
      await sleep(pollMs);
      const stored = await this.latest();
      if (stored) return stored;
    }
    return this.latest();
  }

  private latest(): Promise<StoredMarketSummary | null> {
    return this.storage.read((uow) => uow.marketSummary.latest());
  }

  private ageMs(stored: StoredMarketSummary): number {
    return this.clock.now().getTime() - stored.builtAt.getTime();
  }

  private answer(stored: StoredMarketSummary): SummaryAnswer {
    const age = this.ageMs(stored);
    return {
      freshForSeconds: Math.max(0, Math.floor((this.settings.cacheMs - age) / 1000)),
      summary: stored.summary,
      updatedAt: stored.builtAt,
      stale: age >= this.settings.cacheMs,
      rentalsOpen: this.settings.rentalsOpen,
    };
  }
}
