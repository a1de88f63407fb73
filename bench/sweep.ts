/**
 * Benchmark of one billing sweep pass over N running instances in N/10 accounts on PostgreSQL, every
 * instance with an hourly block due, beside a plain-SQL baseline doing the same writes (one ledger
 * entry per instance, advance every instance, debit every account, mark every machine seen) in the
 * same run. Sizes 10k, 30k and 100k show how the time grows. `npm run bench:sweep`.
 */
import os from 'node:os';
import { pino } from 'pino';
import { ManualClock } from '../adapters/clock/manual-clock.ts';
import type { Machine, Provider } from '../core/ports/providers.ts';
import { createControlPlane, type ControlPlane } from '../hosts/composition/control-plane.ts';
import { freshPostgres, postgresReachable } from '../test/support/database.ts';

const SIZES = (process.env.BENCH_SIZES ?? '10000,30000,100000').split(',').map(Number);
const T0 = new Date('2026-11-21T12:00:00.000Z');
const DUE = new Date(T0.getTime() + 3_600_000 + 1_000);

/** Every seeded instance's machine, as a provider would list it: running, carrying our label. */
function benchProvider(count: number): Provider {
  const machines: Machine[] = Array.from({ length: count }, (_, i) => ({
    machineId: `m${i}`,
    label: `ins_b${i}`,
    status: 'running',
    sshHost: null,
    sshPort: null,
    priceUsdPerHour: null,
  }));
  return {
    name: 'bench',
    machineOptions: [],
    extraFilterKeys: [],
    listOffers: async () => [],
    isOfferId: () => true,
    getOffer: async () => null,
    createMachine: async () => {
      throw new Error('not used');
    },
    getMachine: async (id) => machines[Number(id.slice(1))] ?? null,
    listMachines: async () => machines,
    terminateMachine: async () => undefined,
  };
}

async function seed(plane: ControlPlane, count: number): Promise<void> {
  const accounts = Math.max(1, Math.floor(count / 10));
  const run = (sql: string, params: unknown[] = []) => plane.storage.execute(sql, params);
  await run(
    `insert into tenants (id, name, created_at, bootstrap_digest, bootstrap_expires_at, bootstrap_used_at)
     select 'ten_b' || a, 'bench', ?, 'x', ?, ? from generate_series(0, ? - 1) a`,
    [T0, T0, T0, accounts],
  );
  await run(
    `insert into tokens (id, tenant_id, name, scopes, spend_limit_cents, committed_cents, max_rental_hours, expires_at, parent_id, ancestor_ids, created_at, revoked_at, secret_digest)
     select 'tok_b' || a, 'ten_b' || a, null, '{read,rent}', null, 0, null, null, null, '{}', ?, null, 'x' from generate_series(0, ? - 1) a`,
    [T0, accounts],
  );
  await run(`insert into accounts (tenant_id, balance_cents, created_at) select 'ten_b' || a, 10000000, ? from generate_series(0, ? - 1) a`, [T0, accounts]);
  await run(
    `insert into instances (id, tenant_id, token_id, node_id, provider, offer_id, name, status, gpu_type, gpu_count, rate_cents_per_hour,
                            created_at, started_at, paid_until, machine_id, charged_cents, commitment_cents)
     select 'ins_b' || i, 'ten_b' || (i % ?), 'tok_b' || (i % ?), 'bench:' || i, 'bench', i::text, null, 'running', 'H100', 1,
            50 + (i % 400), ?, ?, ?, 'm' || i, 50 + (i % 400), 50 + (i % 400)
       from generate_series(0, ? - 1) i`,
    [accounts, accounts, T0, T0, new Date(T0.getTime() + 3_600_000), count],
  );
  await run('analyze');
}

/** The same writes as a pass, as plain statements with nothing decided: the floor for this database. */
async function baseline(plane: ControlPlane): Promise<void> {
  await plane.storage.orm.em.fork().transactional(async (em) => {
    await em.execute(
      `insert into ledger_entries (id, tenant_id, kind, amount_cents, balance_after_cents, reference, description, unique_key, created_at)
       select 'led_' || id, tenant_id, 'rental_hour', -rate_cents_per_hour, 0, id, 'hour block', 'base:' || id, ? from instances where paid_until <= ?`,
      [DUE, DUE],
    );
    await em.execute(`update instances set paid_until = paid_until + interval '1 hour', charged_cents = charged_cents + rate_cents_per_hour where paid_until <= ?`, [DUE]);
    await em.execute(
      `update accounts a set balance_cents = a.balance_cents - s.total
         from (select tenant_id, sum(rate_cents_per_hour) as total from instances group by tenant_id) s where a.tenant_id = s.tenant_id`,
    );
    await em.execute(`update instances set last_seen_at = ? where status = 'running'`, [DUE]);
  });
}

async function measure(count: number, what: 'sweep' | 'baseline'): Promise<{ ms: number; paid: number }> {
  const database = await freshPostgres();
  const clock = new ManualClock(T0);
  const plane = await createControlPlane(
    {
      storage: database.target,
      operatorKeys: [],
      rateLimits: { publicPerMinute: 1, perTokenPerMinute: 1 },
      logLevel: 'silent',
      market: { backgroundRefresh: false },
      billing: { sweep: false, defaultMaxBurnCentsPerHour: null },
    },
    { clock, logger: pino({ level: 'silent' }), providers: [benchProvider(count)] },
  );
  try {
    await seed(plane, count);
    clock.set(DUE);
    const started = performance.now();
    let paid = count;
    if (what === 'sweep') {
      const report = await plane.services.sweep.run();
      paid = report.blocksPaid;
      if (report.blocksPaid !== count || report.breakersTripped !== 0 || report.goneUpstream !== 0) {
        throw new Error(`the pass did not do what the baseline does: ${JSON.stringify(report)}`);
      }
    } else {
      await baseline(plane);
    }
    return { ms: performance.now() - started, paid };
  } finally {
    await plane.close();
    await database.drop();
  }
}

async function main(): Promise<void> {
  if (!(await postgresReachable())) {
    console.error('bench:sweep needs PostgreSQL on 127.0.0.1:5432');
    process.exit(1);
  }
  const cpus = os.cpus();
  console.log(`machine: ${cpus.length} × ${cpus[0]?.model ?? 'CPU'}, Node ${process.version}, PostgreSQL on 127.0.0.1`);
  console.log('one sweep pass, every instance with an hour due, 10 instances per account\n');
  console.log('instances   accounts   sweep ms   baseline ms   ratio   sweep ms per 1k');
  for (const size of SIZES) {
    const base = await measure(size, 'baseline');
    const pass = await measure(size, 'sweep');
    console.log(
      `${String(size).padStart(9)}  ${String(size / 10).padStart(9)}  ${pass.ms.toFixed(0).padStart(9)}  ${base.ms.toFixed(0).padStart(12)}  ${(pass.ms / base.ms).toFixed(2).padStart(6)}  ${((pass.ms / size) * 1000).toFixed(1).padStart(16)}`,
    );
  }
  console.log('\ngoals: 100k under 10 s, within 3x of the baseline, growing linearly');
}

await main();
