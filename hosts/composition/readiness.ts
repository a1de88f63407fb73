import type { MarketService } from '../../core/market/market-service.ts';
import type { MikroStorage } from '../../adapters/storage/mikro-storage.ts';
import { migrationStatus } from '../../adapters/storage/migration-status.ts';

export interface ReadinessCheck {
  ok: boolean;
  detail: string;
}

export interface ReadinessReport {
  ready: boolean;
  /** Ready, but Redis is not reached: the replica serves on its own (limits per replica, tokens read through). */
  degraded: boolean;
  checks: { database: ReadinessCheck; migrations: ReadinessCheck; snapshots: ReadinessCheck; redis?: ReadinessCheck };
}

/** What a replica shares through Redis, when REDIS_URL is set. */
export interface SharedConnections {
  connected(): boolean;
}

/** A probe that does not answer in this long counts as failed: a load balancer must not wait on a dead database. */
const CHECK_TIMEOUT_MS = 2_000;
/** Probes arriving together (several balancers, a tight interval) share one answer this long. */
const KEPT_MS = 1_000;

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

async function withinTimeout<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function check(work: () => Promise<string>): Promise<ReadinessCheck> {
  try {
    return { ok: true, detail: await work() };
  } catch (error) {
    return { ok: false, detail: messageOf(error) };
  }
}

/**
 * Whether this replica should get traffic (GET /readyz): its database answers, its schema is exactly the one
 * this build migrates to, and the market has offers to search. One provider's outage does not make a replica
 * unready (every replica would leave the balancer at once, for a cause none of them can fix): the market is
 * ready when at least one enabled provider's offers are served, and the detail names those that are not. Redis
 * unreachable does not make it unready either (each replica serves on its own meanwhile): it is `degraded`.
 */
export function readinessProbe(storage: MikroStorage, market: MarketService, shared: SharedConnections | null = null): () => Promise<ReadinessReport> {
  let kept: { at: number; report: Promise<ReadinessReport> } | null = null;

  async function probe(): Promise<ReadinessReport> {
    const database = await check(async () => {
      await withinTimeout(storage.execute('select 1'), 'the database');
      return 'answers';
    });
    const migrations = !database.ok
      ? { ok: false, detail: 'not checked: the database does not answer' }
      : await check(async () => {
          const { pending, unknown } = await withinTimeout(migrationStatus(storage.orm), 'the database');
          if (unknown.length > 0) throw new Error(`the database has migrations this version does not know: ${unknown.join(', ')}`);
          if (pending.length > 0) throw new Error(`migrations not applied: ${pending.join(', ')}`);
          return 'current';
        });
    const snapshots = await check(async () => {
      const views = market.providerNames.map((name) => market.feed(name)!.view());
      if (views.length === 0) return 'no provider enabled';
      const served = views.filter((view) => view.fetchedAt !== null);
      const missing = views.filter((view) => view.fetchedAt === null).map((view) => `${view.provider} (${view.error ?? 'none'})`);
      if (served.length === 0) throw new Error(`no provider's offers are served yet: ${missing.join(', ')}`);
      return `offers served from ${served.map((view) => view.provider).join(', ')}${missing.length > 0 ? `; none from ${missing.join(', ')}` : ''}`;
    });
    const redis: ReadinessCheck | null =
      shared === null
        ? null
        : shared.connected()
          ? { ok: true, detail: 'connected' }
          : { ok: false, detail: 'unreachable: rate limits are counted in each replica, tokens read from the database on every request' };
    return {
      ready: database.ok && migrations.ok && snapshots.ok,
      degraded: redis?.ok === false,
      checks: { database, migrations, snapshots, ...(redis && { redis }) },
    };
  }

  return () => {
    const now = performance.now();
    if (kept === null || now - kept.at > KEPT_MS) kept = { at: now, report: probe() };
    return kept.report;
  };
}
