import { messageOf } from '../errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { Provider } from '../ports/providers.ts';
import type { MarketSnapshotStore } from '../ports/market-snapshots.ts';
import { cheapestFirst, type MarketNode } from './node.ts';
import { EMPTY_INDEX, NodeIndex } from './node-index.ts';
import type { Offer } from './offer.ts';
import type { FeedTiming, FeedView, FetchObserver } from './feed-view.ts';

export type { FeedTiming, FeedView, FetchObserver } from './feed-view.ts';

/** A lease outlives the listing's timeout by this much before another replica may take over a refresh. */
const LEASE_SLACK_MS = 5_000;
/** How often a replica with no offers yet looks whether the one refreshing has stored them (real time). */
const FIRST_SNAPSHOT_POLL_MS = 50;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * One provider's offers, held as a snapshot: refreshed at most every `refreshIntervalMs`, one refresh
 * at a time, each cut off after `timeoutMs`. Readers never wait on a refresh when a snapshot exists;
 * ages are measured on the Clock port, timeouts in real time (a slow network is real).
 *
 * With a MarketSnapshotStore the snapshot is shared by the replicas: every `syncIntervalMs` (and when its
 * own refresh is due) a replica tries the provider's lease in storage, which lets one replica through per
 * `refreshIntervalMs`; the winner lists the offers and stores them, the others load the stored offers when
 * their generation changed. One listing per interval whatever the number of replicas.
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
  private listings = 0;
  private readonly shared: MarketSnapshotStore | null;
  private lastSyncAt: Date | null = null;

  private readonly fetched: FetchObserver | null;

  /** `fetched` hears of every snapshot this feed listed itself (never of one loaded from another replica). */
  constructor(provider: Provider, clock: Clock, timing: FeedTiming, price: (offer: Offer) => MarketNode, shared: MarketSnapshotStore | null = null, fetched: FetchObserver | null = null) {
    this.fetched = fetched;
    this.provider = provider;
    this.clock = clock;
    this.timing = timing;
    this.price = price;
    this.shared = shared;
  }

  /** How many refreshes this feed started (with shared snapshots, another replica may have won some). */
  get refreshCount(): number {
    return this.refreshes;
  }

  /** How many listings this feed asked of the provider itself. */
  get listingCount(): number {
    return this.listings;
  }

  /** Starts a refresh when one is due and none is running; resolves when the running one ends. */
  refreshIfDue(): Promise<void> {
    if (this.inflight) return this.inflight;
    if (this.due()) return this.refresh();
    // between a replica's own due refreshes, it still tries the lease: the one that took it may have died
    if (this.syncDue()) return this.run(() => this.claimOrSync(this.shared!));
    return Promise.resolve();
  }

  /** Refreshes now (unless one is already running), ignoring the interval (a shared one still keeps it). */
  refresh(): Promise<void> {
    if (this.inflight) return this.inflight;
    this.lastAttemptAt = this.clock.now();
    this.refreshes++;
    const shared = this.shared;
    return this.run(async () => {
      if (shared) await this.claimOrSync(shared);
      else await this.fetch();
    });
  }

  private run(work: () => Promise<void>): Promise<void> {
    this.inflight = work().finally(() => {
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
    const pending = this.inflight === null && !this.due() && !this.syncDue() ? null : this.refreshIfDue();
    return this.snapshot === null ? (pending ?? Promise.resolve()) : null;
  }

  private due(): boolean {
    return this.lastAttemptAt === null || this.clock.now().getTime() - this.lastAttemptAt.getTime() >= this.timing.refreshIntervalMs;
  }

  private syncDue(): boolean {
    if (!this.shared) return false;
    const last = Math.max(this.lastAttemptAt?.getTime() ?? 0, this.lastSyncAt?.getTime() ?? 0);
    return this.clock.now().getTime() - last >= (this.timing.syncIntervalMs ?? 5_000);
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

  /** Lists the offers when this replica wins the lease and stores them for the others; loads theirs otherwise. */
  private async claimOrSync(shared: MarketSnapshotStore): Promise<void> {
    const name = this.provider.name;
    const now = this.clock.now();
    this.lastSyncAt = now;
    let claimed: boolean;
    try {
      const lastStartedBefore = new Date(now.getTime() - this.timing.refreshIntervalMs);
      claimed = await shared.claim(name, now, lastStartedBefore, new Date(now.getTime() + this.timing.timeoutMs + LEASE_SLACK_MS));
    } catch (error) {
      this.lastError = `the shared snapshot could not be read: ${messageOf(error)}`;
      return;
    }
    if (!claimed) return this.sync();
    const listed = await this.fetch();
    try {
      if (listed) {
        const generation = await shared.store(name, listed, this.snapshot!.fetchedAt);
        this.snapshot!.generation = generation;
      } else {
        await shared.fail(name, this.lastError ?? 'refresh failed');
      }
    } catch {
      // the offers are served here all the same; the lease expires and another replica refreshes
    }
  }

  /** Loads the stored offers when their generation is not the one served; waits for the very first ones. */
  private async sync(): Promise<void> {
    const shared = this.shared!;
    const name = this.provider.name;
    this.lastSyncAt = this.clock.now();
    try {
      let head = await shared.head(name, this.clock.now());
      const started = performance.now();
      // another replica is fetching the first offers: wait for them (real time) rather than answer none
      while (this.snapshot === null && head.generation === null && head.refreshing && performance.now() - started < this.timing.timeoutMs + LEASE_SLACK_MS) {
        await sleep(FIRST_SNAPSHOT_POLL_MS);
        head = await shared.head(name, this.clock.now());
      }
      this.lastError = head.error;
      if (head.generation === null || head.generation === this.snapshot?.generation) return;
      const stored = await shared.load(name);
      if (stored) this.install(stored.offers, stored.fetchedAt, stored.generation);
    } catch (error) {
      this.lastError = `the shared snapshot could not be read: ${messageOf(error)}`;
    }
  }

  private install(offers: readonly Offer[], fetchedAt: Date, generation: number): void {
    const nodes = offers.flatMap((offer) => this.priced(offer)).sort(cheapestFirst);
    // the columns are built here, once a minute at most, not on the first search that needs them
    this.snapshot = { nodes, index: new NodeIndex(nodes), fetchedAt, generation };
  }

  /** Lists the provider's offers into the snapshot; answers them, or null when the listing failed. */
  private async fetch(): Promise<Offer[] | null> {
    this.listings++;
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
      // a shared snapshot gets storage's generation once stored; until then one no stored snapshot has
      this.install(offers, this.clock.now(), this.shared ? -this.listings : this.refreshes);
      this.lastError = null;
      this.fetched?.(this.provider.name, this.snapshot!.nodes, this.snapshot!.fetchedAt);
      return offers;
    } catch (error) {
      this.lastError = messageOf(error);
      return null;
    } finally {
      clearTimeout(timer);
    }
  }
}
