/**
 * The price history's size and write cost after 90 days of a 50,000-offer market (4 providers of 12,500 offers
 * each, every hour's snapshot recorded), beside baselines measured in the same run:
 *  - size: the market_price_history table (rows, bytes with its indexes) beside what keeping one snapshot of the
 *    same 50,000 offers costs in market_snapshots (the JSON every replica loads);
 *  - write: one snapshot's points written by PriceHistory.record (points computed from the 12,500 priced nodes,
 *    one upsert) beside a plain multi-row INSERT of the same number of rows into a table of the same shape.
 * `npm run bench:price-history` (BENCH_HISTORY_DAYS to change the span, BENCH_OFFERS the market's size).
 */
import { pino } from 'pino';
import { ManualClock } from '../adapters/clock/manual-clock.ts';
import { MikroMarketSnapshotStore } from '../adapters/storage/stores/market-snapshot-store.ts';
import { MikroPriceHistoryStore } from '../adapters/storage/stores/price-history-store.ts';
import { priceNode } from '../core/market/node.ts';
import { pointsOf, PriceHistory } from '../core/market/price-history.ts';
import { createControlPlane } from '../hosts/composition/control-plane.ts';
import { freshPostgres, postgresReachable } from '../test/support/database.ts';
import { SandboxProvider } from '../adapters/providers/sandbox/adapter.ts';

const DAYS = Number(process.env.BENCH_HISTORY_DAYS ?? 90);
const OFFERS = Number(process.env.BENCH_OFFERS ?? 50_000);
const PROVIDERS = ['sandbox', 'vast', 'runpod', 'lambda'];
const HOUR_MS = 3_600_000;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const mb = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MB`;

async function main(): Promise<void> {
  if (!(await postgresReachable())) throw new Error('bench:price-history needs PostgreSQL (127.0.0.1:5432)');
  const database = await freshPostgres();
  const clock = new ManualClock(new Date('2026-01-01T00:00:00Z'));
  const plane = await createControlPlane(
    {
      storage: database.target,
      operatorKeys: ['bench-operator-key-0123456789'],
      rateLimits: { publicPerMinute: 1_000, perTokenPerMinute: 1_000 },
      logLevel: 'silent',
      market: { backgroundRefresh: false },
      billing: { sweep: false },
      providers: [{ name: 'sandbox', config: { offers: OFFERS } }],
    },
    { logger: pino({ level: 'silent' }), clock },
  );
  try {
    const sandbox = plane.providers.find((p) => p.name === 'sandbox')!;
    const offers = await (sandbox as SandboxProvider).listOffers();
    const nodes = offers.map((offer) => priceNode(offer, 0, []));
    // the market split among 4 providers, as a 50,000-offer market would be
    const share = Math.ceil(nodes.length / PROVIDERS.length);
    const byProvider = PROVIDERS.map((name, k) => ({ name, nodes: nodes.slice(k * share, (k + 1) * share) }));
    const execute = <T>(sql: string, params?: unknown[]) => plane.storage.execute<T>(sql, params);
    const history = new PriceHistory({ store: new MikroPriceHistoryStore(execute), clock, providers: PROVIDERS });

    const writes: number[] = [];
    const started = performance.now();
    for (let hour = 0; hour < DAYS * 24; hour++) {
      const at = new Date(clock.now().getTime() + hour * HOUR_MS);
      for (const { name, nodes: own } of byProvider) {
        const t = performance.now();
        await history.record(name, own, at);
        writes.push(performance.now() - t);
      }
    }
    const total = (performance.now() - started) / 1000;
    const [size] = await execute<{ rows: string; bytes: string }[]>(
      `select (select count(*) from market_price_history) as rows, pg_total_relation_size('market_price_history') as bytes`,
    );

    // baselines: one snapshot of the same offers as the replicas keep it, and a plain INSERT of one snapshot's rows
    const snapshots = new MikroMarketSnapshotStore(execute);
    for (const { name } of byProvider) await snapshots.claim(name, clock.now(), clock.now(), new Date(clock.now().getTime() + 60_000));
    for (const { name, nodes: own } of byProvider) await snapshots.store(name, own.map((n) => n.offer), clock.now());
    const [snapshot] = await execute<{ bytes: string }[]>(`select pg_total_relation_size('market_snapshots') as bytes`);
    await execute(`create table plain_history (like market_price_history including all)`);
    const points = pointsOf('sandbox', byProvider[0]!.nodes, clock.now());
    const plain: number[] = [];
    for (let hour = 0; hour < 500; hour++) {
      const at = new Date(Date.UTC(2030, 0, 1) + hour * HOUR_MS).toISOString();
      const values = points.map((_, i) => `(?, ?, ?, ?, ?, ?)${i < points.length - 1 ? ',' : ''}`).join('');
      const params = points.flatMap((p) => [p.gpuType, p.provider, at, p.minPerGpuCents, p.medianPerGpuCents, p.availableGpus]);
      const t = performance.now();
      await execute(`insert into plain_history (gpu_type, provider, hour, min_per_gpu_cents, median_per_gpu_cents, available_gpus) values ${values}`, params);
      plain.push(performance.now() - t);
    }

    console.log(`price history after ${DAYS} days of a ${nodes.length}-offer market (${PROVIDERS.length} providers, every hour's snapshot recorded; ${total.toFixed(1)} s to write):`);
    console.log(`  rows: ${size!.rows} (families x providers x hours: ${points.length}-odd families per provider)`);
    console.log(`  size: ${mb(Number(size!.bytes))} with its indexes, beside ${mb(Number(snapshot!.bytes))} for ONE snapshot of the same offers in market_snapshots`);
    console.log(`  one snapshot's points written (from ${share} priced nodes, one upsert): median ${median(writes).toFixed(2)} ms, beside ${median(plain).toFixed(2)} ms for a plain INSERT of the same ${points.length} rows`);
  } finally {
    await plane.close();
    await database.drop();
  }
}

await main();
