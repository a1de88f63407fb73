import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type ApiResponse, type TestApi } from '../support/api.ts';
import { canRunPrivatePostgres, startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres.ts';

/** DATABASE_TIMEOUT_MS for this file: short, so each wait on a database that does not answer is short too. */
const TIMEOUT_MS = 1_000;
/** What an answer may take beyond the deadline (the event loop, the closing of the connection, a loaded machine). */
const SLACK_MS = 1_500;
const POOL = 3;

let cluster: PrivatePostgres;
let api: TestApi;
let token: string;
/** Never seen by the server: authenticating it needs the database. */
const UNCACHED = `gcp_tok_0123456789abcdef_${'x'.repeat(32)}`;

beforeAll(async () => {
  cluster = await startPrivatePostgres();
  api = await startApi({ storage: { kind: 'postgres', url: cluster.url, poolSize: POOL, timeoutMs: TIMEOUT_MS } }, { database: { target: { kind: 'postgres', url: cluster.url }, drop: async () => undefined } });
  // the token is cached (the test's clock stands still): requests pass authentication without the database
  ({ token } = await api.newTenant());
  await api.plane.services.market.refreshDue();
});
afterAll(async () => {
  await api?.close();
  await cluster?.destroy();
});

const timed = async (work: () => Promise<ApiResponse>): Promise<ApiResponse & { ms: number }> => {
  const started = performance.now();
  const res = await work();
  return { ...res, ms: performance.now() - started };
};

/** Every kind of request that needs the database, each answered 503 with Retry-After and `{detail}` in time. */
async function expectOutageAnswers(): Promise<number> {
  const answers = [
    await timed(() => api.call('GET', '/v1/billing/account', { token })),
    await timed(() => api.call('POST', '/v1/tokens', { token, body: { name: 'during the outage' } })),
    await timed(() => api.call('GET', '/v1/tokens/self', { token: UNCACHED })),
    await timed(() => api.call('POST', '/mcp', { token: UNCACHED, headers: { accept: 'application/json, text/event-stream' }, body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_token_self', arguments: {} } } })),
  ];
  for (const answer of answers) {
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('5');
    expect(answer.body).toEqual({ detail: 'the database is unavailable; try again in 5 s' });
    expect(answer.ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
  }
  // an MCP tool whose route needs the database: the tool's result is the same error
  const tool = await api.call('POST', '/mcp', {
    token,
    headers: { accept: 'application/json, text/event-stream' },
    body: { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_account', arguments: {} } },
  });
  expect(tool.status).toBe(200);
  expect(tool.body.result).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringMatching(/the database is unavailable/) }] });
  // what the server answers from memory still answers
  const search = await api.call('GET', '/v1/gpus', { token });
  expect(search.status).toBe(200);
  expect(search.body.nodes.length).toBeGreaterThan(0);
  return Math.max(...answers.map((answer) => answer.ms));
}

const recovered = async (): Promise<void> => {
  const deadline = performance.now() + 15_000;
  while ((await api.call('GET', '/v1/billing/account', { token })).status !== 200) {
    if (performance.now() > deadline) throw new Error('the server did not recover within 15 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

/** POOL transactions at once, each holding its connection from its first statement until released. */
function holdEveryConnection(): { entered: Promise<void>; release(): Promise<void> } {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const entered: Promise<void>[] = [];
  const holders = Array.from({ length: POOL }, () => {
    let enter!: () => void;
    entered.push(new Promise<void>((resolve) => (enter = resolve)));
    return api.plane.storage.transaction(async (uow) => {
      await uow.tenants.get('none');
      enter();
      await held;
    });
  });
  return { entered: Promise.all(entered).then(() => undefined), release: () => (release(), Promise.all(holders).then(() => undefined)) };
}

describe.runIf(canRunPrivatePostgres())('a PostgreSQL that does not answer', () => {
  it('stopped: every route that needs it answers 503 with Retry-After: 5 at once, the sweep skips its pass, and the server recovers by itself', async () => {
    expect((await api.call('GET', '/v1/billing/account', { token })).status).toBe(200);
    await cluster.stop();
    const slowest = await expectOutageAnswers();

    await expect(api.plane.services.sweep.run()).rejects.toMatchObject({ code: 'DATABASE_UNAVAILABLE' });
    expect(await api.plane.metrics.render()).toMatch(/sweep_passes_total\{outcome="database_unavailable"\} 1/);

    await cluster.start();
    await recovered();
    expect((await api.call('POST', '/v1/tokens', { token, body: { name: 'after the outage' } })).status).toBe(201);
    expect((await api.plane.services.sweep.run()).ran).toBe(true);
  });

  it('frozen (SIGSTOP: connections hang): 503 within DATABASE_TIMEOUT_MS, never a hang; thawed, it answers again', async () => {
    cluster.freeze();
    try {
      const slowest = await expectOutageAnswers();
      const sweep = performance.now();
      await expect(api.plane.services.sweep.run()).rejects.toMatchObject({ code: 'DATABASE_UNAVAILABLE' });
      expect(performance.now() - sweep).toBeLessThan(TIMEOUT_MS + SLACK_MS);
    } finally {
      cluster.thaw();
    }
    await recovered();
    // no connection the freeze killed stays checked out: the whole pool can be taken again
    const pool = holdEveryConnection();
    await pool.entered;
    await pool.release();
  });

  it('a statement past DATABASE_TIMEOUT_MS on a live database is cut (its connection closed, nothing waits on it); the next one runs', async () => {
    const started = performance.now();
    await expect(api.plane.storage.execute('select pg_sleep(30)')).rejects.toMatchObject({ code: 'DATABASE_UNAVAILABLE' });
    expect(performance.now() - started).toBeLessThan(TIMEOUT_MS + SLACK_MS);
    expect((await api.call('GET', '/v1/billing/account', { token })).status).toBe(200);
    const pool = holdEveryConnection();
    await pool.entered;
    await pool.release();
  });

  it('every pooled connection busy: 503 once none is free within DATABASE_TIMEOUT_MS; free again, 200', async () => {
    const pool = holdEveryConnection();
    try {
      await pool.entered;
      const busy = await timed(() => api.call('GET', '/v1/billing/account', { token }));
      expect(busy.status).toBe(503);
      expect(busy.headers.get('retry-after')).toBe('5');
      expect(busy.ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
      expect(busy.ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
    } finally {
      await pool.release();
    }
    expect((await api.call('GET', '/v1/billing/account', { token })).status).toBe(200);
  });
});
