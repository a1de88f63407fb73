import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freshPostgres, postgresReachable, type TestDatabase } from '../support/database.ts';
import { SWEEP_MAIN, spawnEntry, stop, type Spawned } from '../support/processes.ts';

/**
 * The sweep daemon as a process under SIGTERM (docs/operations.md, "Stop"): the pass in flight ends its money step
 * before the daemon exits 0; a second signal exits 1 at once. A pass is held in a money step by a lock this test
 * takes on every table, so "in flight" is a state the test sees (a query of the daemon's waiting on the lock), not
 * a moment it hopes to hit.
 */
const reachable = await postgresReachable();
if (!reachable && process.env.REQUIRE_POSTGRES === '1') throw new Error('PostgreSQL is required (REQUIRE_POSTGRES=1)');

describe.runIf(reachable)('the sweep daemon under SIGTERM', () => {
  let database: TestDatabase;
  let url: string;
  let daemon: Spawned | null = null;
  let holder: pg.Client | null = null;

  beforeAll(async () => {
    database = await freshPostgres();
    url = (database.target as { url: string }).url;
    // the schema first, so that the daemons below start on a migrated database
    const once = spawnEntry(SWEEP_MAIN, env(), ['--once']);
    expect(await once.exited, once.output()).toBe(0);
  }, 120_000);
  afterEach(async () => {
    await holder?.query('rollback').catch(() => undefined);
    await holder?.end().catch(() => undefined);
    holder = null;
    if (daemon && daemon.child.exitCode === null && daemon.child.signalCode === null) await stop(daemon, 'SIGKILL');
    daemon = null;
  });
  afterAll(async () => database?.drop());

  // a pass every second; statements may wait far longer than this test holds its lock
  const env = () => ({ DATABASE_URL: url, LOG_LEVEL: 'info', CRASH_SWEEP_SECONDS: '1', DATABASE_TIMEOUT_MS: '120000', SHUTDOWN_GRACE_MS: '120000' });

  /** A daemon whose next pass waits in a money step on a lock the test holds; resolves once it waits. */
  async function daemonWithPassInFlight(): Promise<Spawned> {
    const spawned = spawnEntry(SWEEP_MAIN, env());
    daemon = spawned;
    await spawned.line((entry) => entry.msg === 'billing sweep daemon started', 60_000);
    holder = new pg.Client({ connectionString: url, application_name: 'sweep-daemon-signals test' });
    await holder.connect();
    const { rows } = await holder.query<{ name: string }>(`select format('%I', tablename) as name from pg_tables where schemaname = 'public'`);
    await holder.query('begin');
    await holder.query(`lock table ${rows.map((row) => row.name).join(', ')} in access exclusive mode`);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const waiting = await holder.query(`select 1 from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and wait_event_type = 'Lock'`);
      if (waiting.rowCount) return spawned;
      if (Date.now() > deadline) throw new Error(`no pass of the daemon waited on the lock within 60 s:\n${spawned.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('SIGTERM: the pass in flight ends its step, then the daemon exits 0', async () => {
    const running = await daemonWithPassInFlight();
    running.child.kill('SIGTERM');
    await running.line((entry) => entry.msg === 'stopping the sweep daemon: the pass in flight ends its money step', 10_000);
    // still waiting on its step: it has not left the pass behind
    await holder!.query('select pg_sleep(0.5)');
    expect(running.child.exitCode).toBeNull();
    await holder!.query('commit');
    expect(await running.exited, running.output()).toBe(0);
    expect(running.output()).not.toMatch(/second signal/);
  }, 120_000);

  it('a second SIGTERM exits 1 at once, the pass still waiting on its step', async () => {
    const running = await daemonWithPassInFlight();
    running.child.kill('SIGTERM');
    await running.line((entry) => entry.msg === 'stopping the sweep daemon: the pass in flight ends its money step', 10_000);
    const second = performance.now();
    running.child.kill('SIGTERM');
    expect(await running.exited).toBe(1);
    // far below the grace (120 s) and the statement deadline (120 s) the pass would otherwise wait out
    expect(performance.now() - second).toBeLessThan(10_000);
    expect(running.output()).toMatch(/"msg":"second signal: exiting at once"/);
  }, 120_000);
});
