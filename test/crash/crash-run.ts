import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CRASH_POINTS } from '../../core/crash-points.ts';
import { startFakeStripe } from '../fakes/stripe/server.ts';
import { freshPostgres, type TestDatabase } from '../support/database.ts';
import { Cluster, type Kind } from './cluster.ts';
import { checkSnapshot, type CheckOptions } from './invariants.ts';
import { newModel, rng } from './model.ts';
import { apiSnapshot } from './snapshot-api.ts';
import { eventIds, sqlSnapshot } from './snapshot-sql.ts';
import { startWebhookReceiver } from './webhook-receiver.ts';
import { METERED_KIND, OPERATOR_KEY, Workload } from './workload.ts';
import { openTenant } from './tenant-setup.ts';

/**
 * The crash test's run (docs/decisions.md, "Crash anywhere, lose nothing"): our processes on a database of their own
 * (on PostgreSQL a server, a replica and the sweep daemon; on PGlite the one server) over an upstream cloud in a
 * process of its own, a workload on them (workload.ts), one of them killed (SIGKILL) at each named crash point in
 * turn and at seeded random moments, started again each time, and the invariants (invariants.ts) checked against the
 * test's own model: after every pass on PostgreSQL, read from the database; through the API on PGlite, whose
 * directory belongs to its server, and from the directory at the end.
 */

export interface CrashRunOptions {
  storage: 'postgres' | 'pglite';
  seed: number;
  /** How many times a process is killed. */
  kills: number;
  log?: (line: string) => void;
}

export interface CrashFigures {
  storage: string;
  kills: number;
  failpointKills: number;
  /** Kills at each crash point (the process killing itself there). */
  byPoint: Record<string, number>;
  /** Kills of each process kind, and of those how many at a crash point. */
  byKind: Record<string, number>;
  failpointKillsByKind: Record<string, number>;
  randomKills: number;
  requests: number;
  invariantsChecked: number;
  violations: string[];
  /** Deliveries the webhook endpoint received, and the distinct events among them. */
  webhookDeliveries: number;
  eventsDelivered: number;
  /** The slowest answer to a retried idempotency key after a restart, in ms. */
  slowestRetryMs: number;
  /** Time spent starting processes, in ms, and how many starts. */
  startMs: number;
  starts: number;
  wallMs: number;
}

const HOUR = 3_600_000;
/** The metered kind's price: 0.0004 USD a second. */
const USAGE_PRICE_MICROS = 400n;

/** Where a crash point can be reached: the daemon runs passes, the servers rentals, passes and payment webhooks. */
function hostsOf(point: string, kinds: readonly Kind[]): Kind[] {
  if (kinds.length === 1) return [...kinds];
  // a server's pass would race the daemon's for the blocks due: only the daemon is sure to pay them
  if (point === 'between-block-rounds') return ['daemon'];
  if (point === 'between-sweep-steps') return ['daemon', 'server', 'replica'];
  return ['server', 'replica'];
}

/**
 * Who dies at each kill: at a crash point (every other kill), a process that can reach it; at a random moment, the
 * process the next crash point is to be in, so that each kill is followed by one start, of the process killed.
 */
function victims(kills: number, kinds: readonly Kind[], random: () => number): Kind[] {
  const plan: Kind[] = [];
  const pointOf = (kill: number) => CRASH_POINTS[(kill / 2) % CRASH_POINTS.length]!;
  for (let kill = 0; kill < kills + 1; kill += 2) {
    const hosts = hostsOf(pointOf(kill), kinds);
    const host = hosts[Math.floor(random() * hosts.length)]!;
    if (kill > 0) plan.push(host);
    plan.push(host);
  }
  return plan.slice(0, kills);
}

export async function crashRun(options: CrashRunOptions): Promise<CrashFigures> {
  const started = performance.now();
  const random = rng(options.seed);
  const log = options.log ?? (() => undefined);
  const kinds: Kind[] = options.storage === 'postgres' ? ['server', 'replica', 'daemon'] : ['server'];
  const stripe = await startFakeStripe({ secretKey: 'sk_test_crash0123456789', webhookSecret: 'whsec_crash0123456789' });
  const model = newModel(USAGE_PRICE_MICROS);
  const receiver = await startWebhookReceiver(model.eventsReceived);
  let database: TestDatabase | null = null;
  let dataDir: string | null = null;
  const env: Record<string, string> = {
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    OPERATOR_KEYS: OPERATOR_KEY,
    RATE_LIMIT_PUBLIC_PER_MINUTE: '1000000',
    RATE_LIMIT_PER_MINUTE: '1000000',
    OPERATOR_RATE_LIMIT_PER_MINUTE: '1000000',
    SWEEP: 'off', // the sweep daemon's passes and the workload's operator sweeps are the passes
    PAYMENTS: 'stripe',
    STRIPE_SECRET_KEY: stripe.secretKey,
    STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
    STRIPE_API_BASE: stripe.url,
    RENTALS_OPEN: 'true',
    METERED_PRICES: JSON.stringify({ [METERED_KIND]: { unit: 'second', usd_per_unit: '0.0004' } }),
    WEBHOOKS_ALLOW_HTTP: 'true',
    SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
    LAUNCH_LEASE_MS: '600000',
    REDIS_URL: '',
    // every start loads the same modules: compiled once, read from the cache after
    NODE_COMPILE_CACHE: join(tmpdir(), 'gpu-control-plane-crash-compile-cache'),
  };
  if (options.storage === 'postgres') {
    database = await freshPostgres();
    env.DATABASE_URL = (database.target as { url: string }).url;
  } else {
    dataDir = mkdtempSync(join(tmpdir(), 'crash-pglite-'));
    env.DATA_DIR = dataDir;
  }
  const figures: CrashFigures = {
    storage: options.storage,
    kills: 0,
    failpointKills: 0,
    byPoint: Object.fromEntries(CRASH_POINTS.map((point) => [point, 0])),
    byKind: Object.fromEntries(kinds.map((kind) => [kind, 0])),
    failpointKillsByKind: Object.fromEntries(kinds.map((kind) => [kind, 0])),
    randomKills: 0,
    requests: 0,
    invariantsChecked: 0,
    violations: [],
    webhookDeliveries: 0,
    eventsDelivered: 0,
    slowestRetryMs: 0,
    startMs: 0,
    starts: 0,
    wallMs: 0,
  };
  const violation = (what: string) => {
    figures.violations.push(what);
    log(`VIOLATION: ${what}`);
  };
  const cluster = await Cluster.open(kinds, env);
  const work = new Workload(cluster, random, model, stripe, options.seed);
  const target = options.storage === 'postgres' ? env.DATABASE_URL! : { dataDir: dataDir! };
  const machines = () => cluster.machines();
  /** The invariants now: from the database on PostgreSQL, through the API on PGlite (its directory is its server's). */
  const check = async (checks: CheckOptions) => {
    const tenant = work.tenant!;
    const snapshot =
      options.storage === 'postgres'
        ? await sqlSnapshot(target, tenant.id, model.capped!.id, () => cluster.now(), machines)
        : await apiSnapshot((path) => work.tryCall('GET', path, { token: tenant.token }), model.capped!.id, () => cluster.now(), machines);
    if (snapshot) figures.invariantsChecked += checkSnapshot(snapshot, model, violation, checks);
  };

  try {
    await Promise.all(kinds.map((kind) => cluster.start(kind, null)));
    work.tenant = await openTenant(work, model, receiver.url);
    const plan = victims(options.kills, kinds, random);
    // the process of the first crash point dies first (not counted): each kill is followed by the start of the process killed
    await cluster.kill(plan[0]!);

    for (let kill = 0; kill < options.kills; kill++) {
      const failpoint = kill % 2 === 0 ? CRASH_POINTS[(kill / 2) % CRASH_POINTS.length]! : null;
      const restarted = kill === 0 ? plan[0]! : plan[kill - 1]!;
      const victim = plan[kill]!;
      // 4 minutes between one process and the next: within the launch lease (the dead process must be known dead, not
      // waited out) and the provisioning deadline (a create that died is taken up by the first pass, not the deadline);
      // an hour and a minute before a process that is to die between two rounds of blocks, so that blocks are due
      cluster.advance(failpoint === 'between-block-rounds' ? HOUR + 60_000 : 4 * 60_000);
      const processStartedAt = cluster.now();
      // the process killed last starts again; while another server serves, the workload goes on meanwhile, as a
      // replicated deployment does (a process with a crash point to reach is waited for)
      const background = !failpoint && cluster.liveServers().some((kind) => kind !== restarted);
      const starting = cluster.start(restarted, failpoint);
      starting.catch(() => undefined); // awaited at the end of the kill, whatever it answers
      if (!background) await starting;
      const proc = cluster.process(victim)!;
      const dead = () => !cluster.alive(victim);
      let randomTimer: ReturnType<typeof setTimeout> | null = null;
      if (!failpoint) randomTimer = setTimeout(() => proc.child.kill('SIGKILL'), Math.floor(random() * 2_500));
      work.prefer = failpoint && victim !== 'daemon' ? victim : null;
      // the daemon reaches its crash point in its first pass (it runs one a second): before the servers' passes race it
      if (failpoint && victim === 'daemon') await Promise.race([proc.exited, new Promise((resolve) => setTimeout(resolve, 20_000))]);

      // after the restart: every key the kill may have cut answers at once, the same as before
      figures.slowestRetryMs = Math.max(figures.slowestRetryMs, await work.retryCut(violation));
      const down = () => cluster.liveServers().length === 0;
      figures.invariantsChecked += await work.askAgain(down, violation);
      // the processor retries every paid checkout's event: credited once whatever the kill cut
      for (const sessionId of model.paidCheckouts.keys()) if (!down()) await work.deliver(sessionId);

      for (let round = 0; round < 3 && !dead(); round++) {
        const sweep = await work.sweep();
        const passed = sweep.status === 200 && sweep.body?.ran === true;
        if (passed && round === 0 && !dead()) await check({ afterPass: true, processStartedAt });
        else if (passed && options.storage === 'postgres') await check({ afterPass: true });
        await work.round(violation);
      }
      if (randomTimer) clearTimeout(randomTimer);
      await starting;
      const selfKilled = dead();
      if (!dead()) await cluster.kill(victim);
      figures.kills++;
      figures.byKind[victim]!++;
      // a crash point kill is the process killing itself there; one whose rounds never reached it counts as random
      if (failpoint && selfKilled) {
        figures.failpointKills++;
        figures.byPoint[failpoint]!++;
        figures.failpointKillsByKind[victim]!++;
      } else figures.randomKills++;
      log(`kill ${kill + 1}/${options.kills} (${victim} ${failpoint ?? 'random'}${failpoint && !selfKilled ? ' not reached' : ''}) on ${options.storage}: ${work.requests} requests, ${figures.violations.length} violations`);
    }

    // the end: the sweep daemon stopped (nothing moves but what the test asks for), the process killed last started
    // again with no crash point; the retries answer, two passes run (the first after a restart takes up what died),
    // usage is settled, every event committed reaches the endpoint; then every process stops and the database is read
    cluster.advance(HOUR + 60_000);
    work.prefer = null;
    const last = plan[options.kills - 1] ?? plan[0]!;
    if (last !== 'daemon') await cluster.start(last, null);
    if (cluster.alive('daemon')) await cluster.stop('daemon');
    await work.retryCut(violation);
    for (const sessionId of model.paidCheckouts.keys()) await work.deliver(sessionId);
    for (let pass = 0; pass < 2; pass++) {
      const sweep = await work.sweep();
      if (sweep.status !== 200 || sweep.body?.ran !== true) violation(`the last sweep answered ${sweep.status} ran ${sweep.body?.ran}`);
    }
    const settled = await work.tryCall('POST', '/v1/metering/settle', { token: work.tenant.token });
    if (settled.status !== 200) violation(`the last settlement answered ${settled.status}`);
    await awaitDeliveries(work, options.storage === 'postgres' ? () => eventIds(env.DATABASE_URL!, work.tenant!.id) : null, model.eventsReceived, violation);
    await cluster.stopAll();
    const final = await sqlSnapshot(target, work.tenant.id, model.capped!.id, () => cluster.now(), machines);
    figures.invariantsChecked += checkSnapshot(final, model, violation, { afterPass: true, final: true });
  } finally {
    figures.requests = work.requests;
    figures.startMs = Math.round(cluster.startMs);
    figures.starts = cluster.starts;
    figures.webhookDeliveries = receiver.deliveries();
    figures.eventsDelivered = model.eventsReceived.size;
    await cluster.close();
    await receiver.close();
    await stripe.close();
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
  figures.wallMs = Math.round(performance.now() - started);
  return figures;
}

/**
 * Waits (at most a minute) until every event in the outbox reached the endpoint: read from the database, or on
 * PGlite from the endpoint's deliveries through the API (the directory is read once its server stopped).
 */
async function awaitDeliveries(work: Workload, outbox: (() => Promise<string[]>) | null, received: Set<string>, violation: (what: string) => void): Promise<void> {
  const events = async (): Promise<string[]> => {
    if (outbox) return outbox();
    const deliveries = await work.tryCall('GET', `/v1/webhook-endpoints/${work.tenant!.endpointId}/deliveries?limit=1000`, { token: work.tenant!.token });
    return deliveries.status === 200 ? [...new Set((deliveries.body as { event_id: string }[]).map((d) => d.event_id))] : [];
  };
  const deadline = performance.now() + 60_000;
  let missing: string[] = [];
  do {
    missing = (await events()).filter((id) => !received.has(id));
    if (missing.length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  } while (performance.now() < deadline);
  violation(`${missing.length} committed events never reached the endpoint within a minute (${missing.slice(0, 3).join(', ')})`);
}
