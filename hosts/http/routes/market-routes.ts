import { z } from 'zod';
import type { MarketGroup, MarketService, ProviderReport, SearchResult } from '../../../core/market/market-service.ts';
import type { MarketNode } from '../../../core/market/node.ts';
import type { MarketFilter } from '../../../core/market/search-filter.ts';
import type { RentalService } from '../../../core/rentals/rental-service.ts';
import type { MarketSummaryService } from '../../../core/market/summary-service.ts';
import { negotiateCoding } from '../content-coding.ts';
import { CompressionWorker } from '../compression-worker.ts';
import { EncodedHeads } from '../encoded-head.ts';
import { defineRoute, type RouteDef } from '../route.ts';
import { ErrorOut } from '../schemas/common.ts';
import {
  GpuSearchOut,
  GpuSearchQuery,
  MarketplaceOut,
  MarketplaceQuery,
  MarketSummaryOut,
  marketGroupOut,
  marketSummaryOut,
  nodeOut,
  providerStatusOut,
  toMarketFilter,
} from '../schemas/market.ts';

const NODES_OPEN = Buffer.from('{"nodes":[');
const COMMA = Buffer.from(',');
const LIST_CLOSE = Buffer.from('],');

const sameList = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((item, i) => item === b[i]);

const sameReport = (a: ProviderReport, b: ProviderReport): boolean =>
  a.provider === b.provider &&
  a.ok === b.ok &&
  a.error === b.error &&
  a.snapshotAgeSeconds === b.snapshotAgeSeconds &&
  a.fetchedAt?.getTime() === b.fetchedAt?.getTime() &&
  a.count === b.count &&
  sameList(a.ignoredFilters, b.ignoredFilters);

/** Whether two searches would write the same text after their nodes. */
const sameTail = (a: SearchResult, b: SearchResult): boolean =>
  a.total === b.total && sameList(a.ignoredFilters, b.ignoredFilters) && a.providers.length === b.providers.length && a.providers.every((report, i) => sameReport(report, b.providers[i]!));

export function marketRoutes(market: MarketService, summary: MarketSummaryService, rentals: RentalService): RouteDef[] {
  // The market caches its answers per snapshot. The JSON of an answer's nodes (or groups) opens the body and
  // is kept beside the answer, made once, and compressed once per coding asked for; what follows it (ages
  // of the snapshots, the caller's instances) is appended to it per request.
  // Each node's JSON is kept too, as long as its snapshot: answers to different queries share most of their
  // nodes, so a new answer is made of the same bytes instead of serialising 100 nodes again.
  const nodeJson = new WeakMap<MarketNode, Buffer>();
  const jsonOf = (node: MarketNode): Buffer => {
    let json = nodeJson.get(node);
    if (json === undefined) nodeJson.set(node, (json = Buffer.from(JSON.stringify(nodeOut(node)))));
    return json;
  };
  // answers made for one request are compressed on a thread of their own (compression-worker.ts)
  const compressor = new CompressionWorker();
  const nodeHeads = new EncodedHeads((nodes: readonly MarketNode[]) => {
    // sized once: a miss renders a list, and growing it by pushes allocated several times its size
    const parts = new Array<Buffer>(Math.max(2 * nodes.length + 1, 2));
    parts[0] = NODES_OPEN;
    for (let i = 0; i < nodes.length; i++) {
      if (i > 0) parts[2 * i] = COMMA;
      parts[2 * i + 1] = jsonOf(nodes[i]!);
    }
    parts[parts.length - 1] = LIST_CLOSE;
    return parts;
  }, compressor);
  const groupHeads = new EncodedHeads((groups: readonly MarketGroup[]) => [Buffer.from(`{"groups":${JSON.stringify(groups.map(marketGroupOut))},`)], compressor);

  // A query asked again is the same frozen object (router.ts keeps them): its filter is made once too, frozen,
  // and the market keeps the filter's text (MarketService). A one-off query's filter is made and dropped.
  const filters = new WeakMap<object, MarketFilter>();
  const filterOf = (query: Parameters<typeof toMarketFilter>[0]): MarketFilter => {
    if (!Object.isFrozen(query)) return toMarketFilter(query);
    let filter = filters.get(query);
    if (!filter) filters.set(query, (filter = Object.freeze(toMarketFilter(query))));
    return filter;
  };

  const statusOut = (report: Parameters<typeof providerStatusOut>[0]) =>
    providerStatusOut(report, market.feed(report.provider)?.provider.extraFilterKeys ?? []);

  // The text after a search's nodes changes when a snapshot's age ticks (once a second), not per request:
  // kept per cached answer (its node list) with what it was made from, and made again when that differs.
  const searchTails = new WeakMap<readonly MarketNode[], { from: SearchResult; text: string }>();
  const searchTail = (result: SearchResult): string => {
    const kept = result.kept ? searchTails.get(result.nodes) : undefined;
    if (kept && sameTail(kept.from, result)) return kept.text;
    const text = JSON.stringify({
      total: result.total,
      providers: result.providers.map(statusOut),
      ignored_filters: result.ignoredFilters,
      rentals_open: market.settings.rentalsOpen,
    }).slice(1);
    if (result.kept) searchTails.set(result.nodes, { from: result, text });
    return text;
  };

  return [
    defineRoute({
      method: 'get',
      path: '/v1/gpus',
      operationId: 'searchGpus',
      summary: 'Search every enabled provider at once: nodes cheapest first, with each provider\'s status',
      tags: ['market'],
      access: { kind: 'bearer', scope: 'read' },
      query: GpuSearchQuery,
      responses: [{ status: 200, description: 'Matching nodes, cheapest first', schema: GpuSearchOut }],
      async handle({ query, req }) {
        const result = await market.search(filterOf(query), query.limit);
        const coding = negotiateCoding(req.headers['accept-encoding']);
        const tail = searchTail(result);
        const body = result.kept ? { chunks: nodeHeads.body(result.nodes, coding, tail) } : await nodeHeads.once(result.nodes, coding, tail);
        return { status: 200, raw: { contentType: 'application/json', coding, ...body } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/marketplace',
      operationId: 'getMarketplace',
      summary: 'Offers grouped by GPU type, provider and region, with verified price ranges and availability',
      tags: ['market'],
      access: { kind: 'bearer', scope: null },
      query: MarketplaceQuery,
      responses: [{ status: 200, description: 'The marketplace', schema: MarketplaceOut }],
      async handle({ query, caller, req }) {
        const result = await market.marketplace(filterOf(query));
        const recent = await rentals.list(caller!.tenantId, query.recent_limit);
        const rest = JSON.stringify({
          recent_instances: recent.map((i) => ({
            id: i.id,
            node_id: i.nodeId,
            provider: i.provider,
            gpu_type: i.gpuType,
            gpu_count: i.gpuCount,
            status: i.status,
            rate_cents_per_hour: i.rateCentsPerHour,
            created_at: i.createdAt.toISOString(),
          })),
          providers: result.providers.map(statusOut),
          ignored_filters: result.ignoredFilters,
        });
        const coding = negotiateCoding(req.get('accept-encoding'));
        const body = result.kept ? { chunks: groupHeads.body(result.groups, coding, rest.slice(1)) } : await groupHeads.once(result.groups, coding, rest.slice(1));
        return { status: 200, raw: { contentType: 'application/json', coding, ...body } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/market/summary',
      operationId: 'getMarketSummary',
      summary: 'The public market summary: GPU families, cheapest verified per-GPU prices, availability',
      tags: ['market'],
      access: { kind: 'public' },
      responses: [
        {
          status: 200,
          description: 'The summary; refreshed at most every 60 seconds, safe to poll every minute',
          schema: MarketSummaryOut,
          headers: { 'Cache-Control': z.string().meta({ description: '`public, max-age=<seconds until the next refresh>`' }) },
        },
        { status: 503, description: 'No market answered and no snapshot of the last 10 minutes exists', schema: ErrorOut },
      ],
      async handle() {
        const answer = await summary.current();
        return {
          status: 200,
          body: marketSummaryOut(answer),
          headers: { 'cache-control': `public, max-age=${answer.freshForSeconds}` },
        };
      },
    }),
  ];
}
