import { messageOf } from '../errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { Provider } from '../ports/providers.ts';
import { cheapestFirst, type MarketNode } from './node.ts';
import { EMPTY_INDEX, NodeIndex } from './node-index.ts';
import type { Offer } from './offer.ts';

export interface FeedTiming {
  /** A provider is asked again at most this often (upstream searches are rate limited). */
  refreshIntervalMs: number;
  /** One listing may take this long (real time); then it is abandoned and counted as failed. */
  timeoutMs: number;
  /** Offers older than this are no longer served, even when every refresh since has failed. */
  maxAgeMs: number;
}

/** What a feed can serve now. */
export interface FeedView {
  provider: string;
  /** The last refresh succeeded and its offers are being served. */
  ok: boolean;
  /** Why the last refresh failed; null when it did not. */
  error: string | null;
  /** When the offers served were fetched; null when none are served. */
  fetchedAt: Date | null;
  /** Identifies the snapshot served (it changes whenever `nodes` does); null when none is. */
  generation: number | null;
  /** Sorted cheapest first. Empty when nothing was fetched yet, or the last good fetch is too old. */
  nodes: readonly MarketNode[];
  /** The same nodes as columns, for searches. */
  index: NodeIndex;
}

/**
 * One provider's offers, held as a snapshot: refreshed at most every `refreshIntervalMs`, one refresh
 * at a time, each cut off after `timeoutMs`. Readers never wait on a refresh when a snapshot exists;
 * ages are measured on the Clock port, timeouts in real time (a slow network is real).
 */
export class ProviderFeed {
  readonly provider: Provider;
  private readonly clock: Clock;
  private readonly timing: FeedTiming;
  private readonly price: (offer: Offer) => MarketNode;
  private snapshot: { nodes: MarketNode[]; index: NodeIndex; fetchedAt: Date; generation: number } | null = null;
  private lastError: string | null = null;
  private lastAttemptAt: Date | null = null;
  private inflight: Promise<void> | null = null;
  private refreshes = 0;

  constructor(provider: Provider, clock: Clock, timing: FeedTiming, price: (offer: Offer) => MarketNode) {
    this.provider = provider;
    this.clock = clock;
    this.timing = timing;
    this.price = price;
  }

  /** How many listings were asked of the provider so far. */
  get refreshCount(): number {
    return this.refreshes;
  }

  /** Starts a refresh when one is due and none is running; resolves when the running one ends. */
  refreshIfDue(): Promise<void> {
    if (this.inflight) return this.inflight;
    if (!this.due()) return Promise.resolve();
    return this.refresh();
  }

  /** Refreshes now (unless one is already running), ignoring the interval. */
  refresh(): Promise<void> {
    if (this.inflight) return this.inflight;
    this.lastAttemptAt = this.clock.now();
    this.refreshes++;
    this.inflight = this.fetch().finally(() => {
      this.inflight = null;
    });
    return this.inflight;
  }

  /**
   * Waits for the snapshot when there is none yet and a refresh is running, at most the feed's
   * timeout; returns at once otherwise.
   */
  async ready(): Promise<void> {
    await this.waitFor();
  }

  /**
   * Starts a due refresh, and answers what to wait for before searching: the refresh when there is no
   * snapshot yet, nothing when there is one (a search never waits for a refresh then). No promise is made
   * for a search that need not wait.
   */
  waitFor(): Promise<void> | null {
    const pending = this.inflight === null && !this.due() ? null : this.refreshIfDue();
    return this.snapshot === null ? (pending ?? Promise.resolve()) : null;
  }

  private due(): boolean {
    return this.lastAttemptAt === null || this.clock.now().getTime() - this.lastAttemptAt.getTime() >= this.timing.refreshIntervalMs;
  }

  view(): FeedView {
    const now = this.clock.now().getTime();
    const usable = this.snapshot && now - this.snapshot.fetchedAt.getTime() <= this.timing.maxAgeMs ? this.snapshot : null;
    return {
      provider: this.provider.name,
      ok: this.lastError === null && usable !== null,
      error: this.lastError ?? (usable ? null : this.snapshot ? 'the last offers are too old to serve' : 'no offers fetched yet'),
      fetchedAt: usable?.fetchedAt ?? null,
      generation: usable?.generation ?? null,
      nodes: usable?.nodes ?? [],
      index: usable?.index ?? EMPTY_INDEX,
    };
  }

  /** An offer whose price cannot be read is left out, not allowed to sink the whole snapshot. */
  private priced(offer: Offer): MarketNode[] {
    try {
      return [this.price(offer)];
    } catch {
      return [];
    }
  }

  private async fetch(): Promise<void> {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new Error(`no answer within ${this.timing.timeoutMs} ms`));
      }, this.timing.timeoutMs);
    });
    try {
      const offers = await Promise.race([this.provider.listOffers(controller.signal), deadline]);
      const nodes = offers.flatMap((offer) => this.priced(offer)).sort(cheapestFirst);
      // the columns are built here, once a minute at most, not on the first search that needs them
      this.snapshot = { nodes, index: new NodeIndex(nodes), fetchedAt: this.clock.now(), generation: this.refreshes };
      this.lastError = null;
    } catch (error) {
      this.lastError = messageOf(error);
    } finally {
      clearTimeout(timer);
    }
  }
}
