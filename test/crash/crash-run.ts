import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CRASH_POINTS } from '../../core/crash-points.ts';
import { startFakeStripe, type FakeStripe } from '../fakes/stripe/server.ts';
import { freshPostgres, type TestDatabase } from '../support/database.ts';
import { listening, SERVER_MAIN, spawnEntry, stop, type Spawned } from '../support/processes.ts';
import { checkInvariants, type Model } from './invariants.ts';

/**
 * The crash test's run (docs/decisions.md, "Crash anywhere, lose nothing"): a server in a child process on a
 * database of its own, a workload of rentals with idempotency keys, quotes, terminates, operator sweeps and Stripe
 * payment webhooks, killed (SIGKILL) at each named crash point in turn and at seeded random moments, started again
 * on the same database each time, and the invariants checked against the test's own model (invariants.ts).
 * The sandbox cloud keeps its machines in rows its own statements commit, outside our transactions: they outlive
 * our crashes as an external cloud's would.
 */

export interface CrashRunOptions {
  storage: 'postgres' | 'pglite';
  seed: number;
  /** How many times the server is killed. */
  kills: number;
  log?: (line: string) => void;
}

export interface CrashFigures {
  storage: string;
  kills: number;
  failpointKills: number;
  /** Kills at each crash point (the process killing itself there). */
  byPoint: Record<string, number>;
  randomKills: number;
  requests: number;
  invariantsChecked: number;
  violations: string[];
  /** The slowest answer to a retried idempotency key after a restart, in ms. */
  slowestRetryMs: number;
  /** Time spent starting servers, in ms. */
  startMs: number;
  wallMs: number;
}

const OPERATOR_KEY = 'crash-test-operator-key-0123456789';
const HOUR = 3_600_000;

/** mulberry32: a seeded generator, so a failing run can be played again. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Answer {
  status: number;
  body: any;
}

export async function crashRun(options: CrashRunOptions): Promise<CrashFigures> {
  const started = performance.now();
  const random = rng(options.seed);
  const log = options.log ?? (() => undefined);
  const stripe: FakeStripe = await startFakeStripe({ secretKey: 'sk_test_crash0123456789', webhookSecret: 'whsec_crash0123456789' });
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
    SWEEP: 'off', // the workload's operator sweeps are the passes
    PAYMENTS: 'stripe',
    STRIPE_SECRET_KEY: stripe.secretKey,
    STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
    STRIPE_API_BASE: stripe.url,
    RENTALS_OPEN: 'true',
    SANDBOX_SEED: String(options.seed),
    SANDBOX_OFFERS: '300',
    SANDBOX_LATENCY_MS: '40',
    LAUNCH_LEASE_MS: '600000',
    REDIS_URL: '',
    // every start of the server loads the same modules: compiled once, read from the cache after
    NODE_COMPILE_CACHE: join(tmpdir(), 'gpu-control-plane-crash-compile-cache'),
  };
  if (options.storage === 'postgres') {
    database = await freshPostgres();
    env.DATABASE_URL = (database.target as { url: string }).url;
  } else {
    dataDir = mkdtempSync(join(tmpdir(), 'crash-pglite-'));
    env.DATA_DIR = dataDir;
  }
  const model: Model = { creditedCents: 0, firstAnswers: new Map(), quoteKeys: new Map(), paidCheckouts: new Map() };
  const figures: CrashFigures = { storage: options.storage, kills: 0, failpointKills: 0, byPoint: Object.fromEntries(CRASH_POINTS.map((point) => [point, 0])), randomKills: 0, requests: 0, invariantsChecked: 0, violations: [], slowestRetryMs: 0, startMs: 0, wallMs: 0 };
  let server: Spawned | null = null;
  let base = '';
  let offsetMs = 0;
  let token = '';
  let tenantId = '';
  const running = new Set<string>();
  /** Keys whose request the kill may have cut: asked again after the restart. */
  const pending = new Map<string, Record<string, unknown>>();

  const call = async (method: string, path: string, init: { token?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {}): Promise<Answer> => {
    figures.requests++;
    const headers: Record<string, string> = { ...(init.headers ?? {}) };
    if (init.token) headers.authorization = `Bearer ${init.token}`;
    if (init.body !== undefined || init.raw !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${base}${path}`, { method, headers, body: init.raw ?? (init.body === undefined ? undefined : JSON.stringify(init.body)) });
    const text = await res.text();
    let body: any = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = text;
    }
    return { status: res.status, body };
  };
  /** A call the kill may cut: no answer reads as status 0. */
  const tryCall = (method: string, path: string, init: Parameters<typeof call>[2] = {}): Promise<Answer> => call(method, path, init).catch(() => ({ status: 0, body: null }));
  const op = { 'x-service-operator-key': OPERATOR_KEY };

  const start = async (crashAt: string | null) => {
    const extra: Record<string, string> = { CRASH_CLOCK_OFFSET_MS: String(offsetMs) };
    if (crashAt) extra.CRASH_AT = crashAt;
    const asked = performance.now();
    server = spawnEntry(SERVER_MAIN, { ...env, ...extra });
    base = await listening(server, 120_000);
    figures.startMs += performance.now() - asked;
  };
  const violation = (what: string) => {
    figures.violations.push(what);
    log(`VIOLATION: ${what}`);
  };

  try {
    await start(null);
    const tenant = await call('POST', '/v1/tenants', { body: { name: 'crash' } });
    tenantId = tenant.body.id;
    const root = await call('POST', '/v1/tokens', { body: { tenant_id: tenantId, bootstrap_secret: tenant.body.bootstrap_secret, scopes: ['read', 'rent', 'manage', 'billing'] } });
    token = root.body.token;
    const credit = await call('POST', `/v1/operator/tenants/${tenantId}/credit`, { headers: op, body: { amount_usd: 5_000, reason: 'crash test funds' } });
    if (credit.status !== 201) throw new Error(`credit: ${credit.status} ${JSON.stringify(credit.body)}`);
    model.creditedCents += 500_000;
    const nodes = ((await call('GET', '/v1/gpus?limit=200&provider=sandbox', { token })).body.nodes as { id: string; price_per_hour_cents: number }[]).filter((n) => n.price_per_hour_cents < 800);
    if (nodes.length < 20) throw new Error(`too few cheap sandbox nodes: ${nodes.length}`);
    await stop(server!, 'SIGKILL');

    let serial = 0;
    const bodies = new Map<string, Record<string, unknown>>();
    const rentWith = async (key: string, body: Record<string, unknown>) => {
      bodies.set(key, body);
      pending.set(key, body);
      const answer = await tryCall('POST', '/v1/instances', { token, body: { ...body, idempotency_key: key } });
      if (answer.status === 0) return;
      pending.delete(key);
      // a refusal before the commit holds nothing (the key is free to rent later); an instance is the key's for good
      if (!model.firstAnswers.has(key) || model.firstAnswers.get(key)!.id === null) model.firstAnswers.set(key, { status: answer.status, id: answer.body?.id ?? null });
      if (answer.status === 201 || answer.status === 200) running.add(answer.body.id);
    };
    const deliver = async (sessionId: string) => {
      const session = stripe.sessions.get(sessionId)!;
      const event = stripe.signedEvent('checkout.session.completed', session, { timestamp: Math.floor((Date.now() + offsetMs) / 1000) });
      return tryCall('POST', '/v1/webhooks/stripe', { raw: event.body, headers: { 'stripe-signature': event.header } });
    };

    for (let kill = 0; kill < options.kills; kill++) {
      const failpoint = kill % 2 === 0 ? CRASH_POINTS[(kill / 2) % CRASH_POINTS.length]! : null;
      // 4 minutes between one process and the next: within the launch lease (the dead process must be known dead, not
      // waited out) and the provisioning deadline (a create that died is taken up by the first pass, not the deadline);
      // an hour and a minute before a process that is to die between two rounds of blocks, so that blocks are due
      offsetMs += failpoint === 'between-block-rounds' ? HOUR + 60_000 : 4 * 60_000;
      const processStartedAt = Date.now() + offsetMs;
      await start(failpoint);
      const proc = server!;
      let randomTimer: ReturnType<typeof setTimeout> | null = null;
      if (!failpoint) randomTimer = setTimeout(() => proc.child.kill('SIGKILL'), Math.floor(random() * 2_500));
      const dead = () => proc.child.exitCode !== null || proc.child.signalCode !== null;

      // after the restart: every key the kill may have cut answers at once, the same as before
      for (const [key, body] of [...pending]) {
        const asked = performance.now();
        await rentWith(key, body);
        const took = performance.now() - asked;
        if (!pending.has(key)) figures.slowestRetryMs = Math.max(figures.slowestRetryMs, took);
        if (!pending.has(key) && took > 5_000) violation(`key ${key} answered after ${Math.round(took)} ms after a restart`);
      }
      for (const [key, first] of model.firstAnswers) {
        if (dead() || first.id === null || random() > 0.2) continue;
        const again = await tryCall('POST', '/v1/instances', { token, body: { ...bodies.get(key), idempotency_key: key } });
        if (again.status === 0) continue;
        figures.invariantsChecked++;
        if (again.body?.id !== first.id) violation(`key ${key} answered ${again.status} ${again.body?.id ?? again.body?.detail} after a restart, ${first.status} ${first.id} before`);
      }
      // the processor retries every paid checkout's event: credited once whatever the kill cut
      for (const sessionId of model.paidCheckouts.keys()) if (!dead()) await deliver(sessionId);

      for (let round = 0; round < 3 && !dead(); round++) {
        const sweep = await tryCall('POST', '/v1/operator/sweep', { headers: op });
        if (sweep.status === 200 && round === 0 && !dead()) {
          // through the API, on both databases: a create that died with an earlier process was taken up by this pass
          const listed = await tryCall('GET', '/v1/instances', { token });
          for (const instance of listed.status === 200 ? (listed.body as { id: string; status: string; created_at: string }[]) : []) {
            figures.invariantsChecked++;
            if (instance.status === 'provisioning' && new Date(instance.created_at).getTime() < processStartedAt) violation(`${instance.id}: created by an earlier process, still provisioning after the first pass`);
          }
        }
        if (sweep.status === 200 && options.storage === 'postgres' && !dead()) {
          figures.invariantsChecked += await checkInvariants(env.DATABASE_URL!, model, tenantId, offsetMs, violation, { afterPass: true, processStartedAt });
        }
        const picks = Array.from({ length: 3 }, () => nodes[Math.floor(random() * nodes.length)]!);
        const quote = await tryCall('POST', '/v1/quotes', { token, body: { node_id: picks[2]!.id } });
        const work: Promise<unknown>[] = [rentWith(`k${serial++}`, { node_id: picks[0]!.id }), rentWith(`k${serial++}`, { node_id: picks[1]!.id })];
        if (quote.status === 201) {
          for (let twice = 0; twice < 2; twice++) {
            const key = `q${serial++}`;
            model.quoteKeys.set(key, quote.body.id);
            work.push(rentWith(key, { quote_id: quote.body.id }));
          }
        }
        const ended = [...running].slice(0, 2);
        for (const id of ended) work.push(tryCall('POST', `/v1/instances/${id}/terminate`, { token }).then((r) => r.status !== 0 && running.delete(id)));
        work.push(
          tryCall('POST', '/v1/billing/checkout', { token, body: { amount_usd: 5 } }).then(async (checkout) => {
            if (checkout.status !== 201) return;
            stripe.completeSession(checkout.body.session_id, { brand: 'visa', last4: '4242' });
            model.paidCheckouts.set(checkout.body.session_id, 500);
            await deliver(checkout.body.session_id);
            await deliver(checkout.body.session_id);
          }),
        );
        work.push(tryCall('POST', '/v1/operator/sweep', { headers: op }));
        await Promise.all(work);
      }
      if (randomTimer) clearTimeout(randomTimer);
      const selfKilled = dead();
      if (!dead()) proc.child.kill('SIGKILL');
      await proc.exited;
      figures.kills++;
      // a failpoint kill is the process killing itself there; one whose rounds never reached it counts as random
      if (failpoint && selfKilled) {
        figures.failpointKills++;
        figures.byPoint[failpoint]!++;
      } else figures.randomKills++;
      log(`kill ${kill + 1}/${options.kills} (${failpoint ?? 'random'}) on ${options.storage}: ${figures.requests} requests, ${figures.violations.length} violations`);
    }

    // a last start with no crash: the retries answer, two passes run (the first after a restart takes up what died)
    offsetMs += HOUR + 60_000;
    await start(null);
    for (const [key, body] of [...pending]) await rentWith(key, body);
    for (const sessionId of model.paidCheckouts.keys()) await deliver(sessionId);
    for (let pass = 0; pass < 2; pass++) {
      const sweep = await call('POST', '/v1/operator/sweep', { headers: op });
      if (sweep.status !== 200) violation(`the last sweep answered ${sweep.status}`);
    }
    // the server's own answer agrees with its ledger
    const balance = await call('GET', '/v1/billing/balance', { token });
    const ledger = await call('GET', '/v1/billing/ledger?limit=1', { token });
    figures.invariantsChecked++;
    if (ledger.status === 200 && Array.isArray(ledger.body) && ledger.body[0] && ledger.body[0].balance_after_cents !== balance.body.balance_cents) {
      violation(`the balance ${balance.body.balance_cents} is not the ledger's last balance ${ledger.body[0].balance_after_cents}`);
    }
    await stop(server!, 'SIGTERM');
    figures.invariantsChecked += await checkInvariants(options.storage === 'postgres' ? env.DATABASE_URL! : { dataDir: dataDir! }, model, tenantId, offsetMs, violation, { afterPass: true, final: true });
  } finally {
    if (server && (server as Spawned).child.exitCode === null) await stop(server, 'SIGKILL');
    await stripe.close();
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
  figures.wallMs = Math.round(performance.now() - started);
  figures.startMs = Math.round(figures.startMs);
  return figures;
}

