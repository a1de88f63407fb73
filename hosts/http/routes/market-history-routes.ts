import type { PriceHistory } from '../../../core/market/price-history.ts';
import { MAX_POINTS } from '../../../core/market/price-history.ts';
import { defineRoute, type RouteDef } from '../route.ts';
import { PriceHistoryOut, PriceHistoryQuery, priceHistoryOut } from '../schemas/market-history.ts';

/** The market's price history (docs/decisions.md, "Price history"). */
export function marketHistoryRoutes(history: PriceHistory): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/market/history',
      operationId: 'getPriceHistory',
      summary: `A GPU family's lowest and median verified per-GPU price and GPUs available, by hour or day, over the last 90 days (at most ${MAX_POINTS} points)`,
      tags: ['market'],
      access: { kind: 'bearer', scope: 'read' },
      query: PriceHistoryQuery,
      responses: [{ status: 200, description: 'Points, oldest first', schema: PriceHistoryOut }],
      async handle({ query }) {
        const asked = { gpuType: query.gpu_type, provider: query.provider ?? null, granularity: query.granularity, since: query.since ?? null, until: query.until ?? null };
        return { status: 200, body: priceHistoryOut(await history.history(asked)) };
      },
    }),
  ];
}
