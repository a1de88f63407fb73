import { invalidInput } from '../errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { MarketSnapshotStore } from '../ports/market-snapshots.ts';
import { supportedOperations, type Provider } from '../ports/providers.ts';
import { priceNode, type MarketNode } from './node.ts';
import { addToGroup, byGroupKey } from './market-groups.ts';
import { mergeCheapest } from './merge-cheapest.ts';
import type { MarketGroup, MarketplaceResult, ProviderReport, SearchResult } from './search-result.ts';
import { SecondAsking } from './admission.ts';
import { ProviderFeed, type FeedTiming, type FeedView, type FetchObserver } from './provider-feed.ts';
import type { Found, Scope } from './node-index.ts';
import { activeStandardFilters, type ExtraFilter, type MarketFilter, type StandardFilter } from './search-filter.ts';

export interface MarketSettings {
  /** Basis points added to upstream prices once renting is open (while closed, prices are upstream's own). */
  markupBps: number;
  rentalsOpen: boolean;
  timing: FeedTiming;
}

/** Where each fresh snapshot goes besides the search (the price history). */
export interface SnapshotRecorder {
  record(provider: string, nodes: readonly MarketNode[], fetchedAt: Date): Promise<void>;
}

export type { MarketGroup, MarketplaceResult, ProviderReport, SearchResult } from './search-result.ts';

interface Selection {
  feed: ProviderFeed;
  view: FeedView;
  /** Standard filters not applied to this provider's offers. */
  ignored: ReadonlySet<StandardFilter>;
  /** The extra filters it knows. */
  extra: ExtraFilter[];
  ignoredNames: string[];
}

/** What a search computes from the snapshots; cached until a snapshot changes. */
interface Matches<T> {
  result: T;
  counts: number[];
  kept: boolean;
}

/** Answers computed per snapshot generation and query; the snapshots change at most once a minute. */
const CACHE_ENTRIES = 512;
/** A query's answer is cached from its second asking within this many distinct queries (admission.ts). */
const ADMISSION_WINDOW = 2 * CACHE_ENTRIES;

/**
 * The market as our callers see it: every enabled provider's snapshot, priced in cents, filtered and
 * sorted here (never upstream), with a report per provider so a slow or failing cloud is visible
 * instead of silently missing.
 */
export class MarketService {
  readonly settings: MarketSettings;
  private readonly feeds: ProviderFeed[];
  private readonly clock: Clock;
  private readonly cache = new Map<string, Matches<unknown>>();
  private readonly admission = new SecondAsking(ADMISSION_WINDOW);
  private readonly filterTexts = new WeakMap<MarketFilter, string>();
  private readonly abilitiesOf = new Map<ProviderFeed, { unfilterable: ReadonlySet<string>; known: ReadonlySet<string> }>();

  /**
   * `snapshots`: shared by the replicas (one refresh per provider and interval among them all); none keeps them here
   * alone. `history` records each snapshot listed here (the replica that won a shared refresh records it for all).
   */
  constructor(providers: readonly Provider[], clock: Clock, settings: MarketSettings, snapshots: MarketSnapshotStore | null = null, history: SnapshotRecorder | null = null) {
    const names = new Set<string>();
    for (const provider of providers) {
      if (names.has(provider.name)) throw new Error(`provider "${provider.name}" is registered twice`);
      names.add(provider.name);
    }
    this.settings = settings;
    const markup = settings.rentalsOpen ? settings.markupBps : 0;
    this.feeds = providers.map((provider) => {
      const operations = supportedOperations(provider);
      // a point missed (the database busy) is the hour's next snapshot's to write
      const record: FetchObserver | null = history && ((name, nodes, at) => void history.record(name, nodes, at).catch(() => undefined));
      return new ProviderFeed(provider, clock, settings.timing, (offer) => priceNode(offer, markup, operations), snapshots, record);
    });
    this.clock = clock;
  }

  get providerNames(): string[] {
    return this.feeds.map((feed) => feed.provider.name);
  }

  feed(name: string): ProviderFeed | undefined {
    return this.feeds.find((feed) => feed.provider.name === name);
  }

  /** For the background schedule: starts every due refresh and waits for them. */
  async refreshDue(): Promise<void> {
    await Promise.all(this.feeds.map((feed) => feed.refreshIfDue()));
  }

  /** Every provider's current view after any due refresh, for the market summary. */
  async freshViews(): Promise<FeedView[]> {
    await this.refreshDue();
    return this.feeds.map((feed) => feed.view());
  }

  async search(filter: MarketFilter, limit: number): Promise<SearchResult> {
    const selections = await this.select(filter);
    const { result: nodes, counts, kept } = this.cached(['search', filter, limit], selections, () => {
      const counts: number[] = [];
      const cheapest = selections.map((selection) => {
        // matches come cheapest first, like the snapshot: the first `limit` are this provider's share
        const { total, first } = matching(selection, filter, 'rentable', limit);
        counts.push(total);
        const nodes = new Array<MarketNode>(first.length);
        for (let i = 0; i < first.length; i++) nodes[i] = selection.view.nodes[first[i]!]!;
        return nodes;
      });
      return { result: mergeCheapest(cheapest, limit), counts };
    });
    return {
      nodes,
      total: counts.reduce((sum, count) => sum + count, 0),
      providers: selections.map((selection, i) => this.report(selection, counts[i]!)),
      ignoredFilters: ignoredByAll(selections),
      kept,
    };
  }

  async marketplace(filter: MarketFilter): Promise<MarketplaceResult> {
    const selections = await this.select(filter);
    const { result: groups, counts, kept } = this.cached(['marketplace', filter], selections, () => {
      const groups = new Map<string, MarketGroup>();
      const counts = selections.map((selection) => {
        const { total, first } = matching(selection, filter, 'all', Infinity);
        for (const position of first) addToGroup(groups, selection.view.nodes[position]!);
        return total;
      });
      return { result: [...groups.values()].sort(byGroupKey), counts };
    });
    return {
      groups,
      providers: selections.map((selection, i) => this.report(selection, counts[i]!)),
      ignoredFilters: ignoredByAll(selections),
      kept,
    };
  }

  /**
   * The answer for this query and these snapshot generations: computed, and kept from the second time it is
   * asked (SecondAsking), so one-off queries leave nothing behind.
   */
  private cached<T>(query: [kind: string, filter: MarketFilter, limit?: number], selections: Selection[], compute: () => Omit<Matches<T>, 'kept'>): Matches<T> {
    const [kind, filter, limit] = query;
    let generations = '';
    for (const { view } of selections) generations += `${JSON.stringify(view.provider)}@${view.generation},`;
    const key = `${kind}:${limit ?? ''}:${generations}${this.textOf(filter)}`;
    const hit = this.cache.get(key) as Matches<T> | undefined;
    if (hit) return hit;
    const computed = compute();
    if (!this.admission.admit(key)) return { ...computed, kept: false };
    const kept = { ...computed, kept: true };
    if (this.cache.size >= CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, kept);
    return kept;
  }

  /** A filter as cache keys hold it: made once per frozen filter (a host may pass the same one again). */
  private textOf(filter: MarketFilter): string {
    if (!Object.isFrozen(filter)) return JSON.stringify(filter);
    let text = this.filterTexts.get(filter);
    if (text === undefined) this.filterTexts.set(filter, (text = JSON.stringify(filter)));
    return text;
  }

  /** The feeds the filter asks about, each ready (or given up on) and with the filters it cannot apply. */
  private async select(filter: MarketFilter): Promise<Selection[]> {
    let feeds = this.feeds;
    if (filter.provider !== undefined) {
      const wanted = filter.provider.toLowerCase();
      feeds = feeds.filter((feed) => feed.provider.name === wanted);
      if (feeds.length === 0) {
        throw invalidInput(['query', 'provider'], `no provider "${filter.provider}" here; enabled: ${this.providerNames.join(', ') || 'none'}`);
      }
    }
    const waits: Promise<void>[] = [];
    for (const feed of feeds) {
      const wait = feed.waitFor();
      if (wait) waits.push(wait);
    }
    if (waits.length > 0) await Promise.all(waits);
    const standard = activeStandardFilters(filter);
    return feeds.map((feed) => {
      const { unfilterable, known } = this.abilities(feed);
      const ignored = new Set(standard.filter((name) => unfilterable.has(name)));
      const extra = filter.extra.length === 0 ? filter.extra : filter.extra.filter((item) => known.has(item.key));
      const unknownExtra = filter.extra.filter((item) => !known.has(item.key)).map((item) => item.text);
      return { feed, view: feed.view(), ignored, extra, ignoredNames: [...ignored, ...unknownExtra] };
    });
  }

  /** What a provider cannot filter on and the extra keys it knows: the same for every search, made once. */
  private abilities(feed: ProviderFeed): { unfilterable: ReadonlySet<string>; known: ReadonlySet<string> } {
    let abilities = this.abilitiesOf.get(feed);
    if (!abilities) {
      abilities = { unfilterable: new Set(feed.provider.unfilterable ?? []), known: new Set(feed.provider.extraFilterKeys) };
      this.abilitiesOf.set(feed, abilities);
    }
    return abilities;
  }

  private report({ view, ignoredNames }: Selection, count: number): ProviderReport {
    const now = this.clock.now().getTime();
    return {
      provider: view.provider,
      ok: view.ok,
      error: view.error,
      snapshotAgeSeconds: view.fetchedAt ? Math.max(0, Math.floor((now - view.fetchedAt.getTime()) / 1000)) : null,
      fetchedAt: view.fetchedAt,
      count,
      ignoredFilters: ignoredNames,
    };
  }
}

/** What the filter keeps of the selection's snapshot: how many, and the first `limit` (cheapest first). */
const matching = ({ view, ignored, extra }: Selection, filter: MarketFilter, scope: Scope, limit: number): Found =>
  view.index.select(filter, ignored, extra, scope, limit);

function ignoredByAll(selections: Selection[]): string[] {
  if (selections.length === 0) return [];
  const [first, ...rest] = selections;
  return first!.ignoredNames.filter((name) => rest.every((selection) => selection.ignoredNames.includes(name)));
}
