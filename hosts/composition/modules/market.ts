import { instanceCachingFactory, type DependencyContainer } from 'tsyringe';
import type { MikroStorage } from '../../../adapters/storage/mikro-storage.ts';
import { MikroMarketSnapshotStore } from '../../../adapters/storage/stores/market-snapshot-store.ts';
import { MikroPriceHistoryStore } from '../../../adapters/storage/stores/price-history-store.ts';
import { MarketService } from '../../../core/market/market-service.ts';
import { PriceHistory } from '../../../core/market/price-history.ts';
import { MarketSummaryService } from '../../../core/market/summary-service.ts';
import type { ControlPlaneConfig } from '../config.ts';
import { CLOCK, get, PROVIDERS, STORAGE } from './ports.ts';

/** The market's fixed rules: 60 s between refreshes, 10 minutes of stale summary at most. */
export const REFRESH_INTERVAL_MS = 60_000;
const STALE_LIMIT_MS = 600_000;

/** The market: every provider's snapshot and search, the summary, and the price history. */
export function registerMarket(container: DependencyContainer, parts: { config: ControlPlaneConfig; storage: MikroStorage; rentalsOpen: boolean }): void {
  const { config, storage, rentalsOpen } = parts;
  const timeoutMs = config.market?.providerTimeoutMs ?? 10_000;
  const sql = <T,>(text: string, params?: unknown[]) => storage.execute<T>(text, params);
  // on PostgreSQL several replicas may run: one lists each provider per interval and the others load its offers
  const sharedSnapshots = config.market?.sharedSnapshots ?? storage.target.kind === 'postgres';
  container.register(MarketService, {
    useFactory: instanceCachingFactory(
      (c) =>
        new MarketService(
          get(c, PROVIDERS),
          get(c, CLOCK),
          {
            markupBps: config.market?.markupBps ?? 0,
            rentalsOpen,
            timing: { refreshIntervalMs: config.market?.refreshIntervalMs ?? REFRESH_INTERVAL_MS, timeoutMs, maxAgeMs: STALE_LIMIT_MS },
          },
          sharedSnapshots ? new MikroMarketSnapshotStore(sql) : null,
          c.resolve(PriceHistory),
        ),
    ),
  });
  container.register(PriceHistory, {
    useFactory: instanceCachingFactory(
      (c) => new PriceHistory({ store: new MikroPriceHistoryStore(sql), clock: get(c, CLOCK), providers: get(c, PROVIDERS).map((provider) => provider.name) }),
    ),
  });
  container.register(MarketSummaryService, {
    useFactory: instanceCachingFactory(
      (c) =>
        new MarketSummaryService(c.resolve(MarketService), get(c, STORAGE), get(c, CLOCK), {
          cacheMs: REFRESH_INTERVAL_MS,
          staleLimitMs: STALE_LIMIT_MS,
          leaseMs: timeoutMs + 30_000,
          waitMs: timeoutMs + 1_000,
          rentalsOpen,
        }),
    ),
  });
}
