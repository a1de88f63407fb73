import { createServer, request, type IncomingMessage } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listening, SERVER_MAIN, spawnEntry, stop, type Spawned } from '../support/processes.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'gcp-shutdown-'));
const running: Spawned[] = [];
afterAll(async () => {
  for (const server of running) await stop(server, 'SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

const startServer = async (): Promise<{ server: Spawned; base: string }> => {
  const server = spawnEntry(SERVER_MAIN, {
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DATABASE_URL: '',
    LOG_LEVEL: 'info',
    SWEEP: 'off',
    SHUTDOWN_GRACE_MS: '30000',
    WEBHOOKS_ALLOW_HTTP: 'true',
    WEBHOOK_TIMEOUT_MS: '1000',
  });
  running.push(server);
  // a loaded machine (shared by several test runs) can take most of a minute to open the embedded database
  return { server, base: await listening(server, 90_000) };
};

const json = async (base: string, method: string, path: string, body?: unknown, token?: string) => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as any };
};

async function newTenant(base: string): Promise<string> {
  const tenant = await json(base, 'POST', '/v1/tenants', { name: 'shutdown' });
  const token = await json(base, 'POST', '/v1/tokens', { tenant_id: tenant.body.id, bootstrap_secret: tenant.body.bootstrap_secret, scopes: ['read', 'rent', 'manage', 'billing'] });
  return token.body.token as string;
}

/**
 * A request the server has begun (it answered `100 Continue` to its headers: the handler is waiting for the body)
 * whose body the test sends when it chooses: a request provably in flight, with no timing guessed.
 */
function requestInFlight(base: string, path: string, token: string, body: unknown) {
  const text = JSON.stringify(body);
  const url = new URL(path, base);
  const req = request({
    host: url.hostname,
    port: url.port,
    path,
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), expect: '100-continue' },
  });
  const begun = new Promise<void>((resolve) => req.once('continue', () => resolve()));
  const answered = new Promise<{ status: number; body: any }>((resolve, reject) => {
    req.once('response', (res) => {
      let received = '';
      res.on('data', (chunk: Buffer) => (received += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(received) }));
    });
    req.once('error', reject);
  });
  answered.catch(() => undefined);
  req.flushHeaders();
  return { begun, finish: () => (req.end(text), answered) };
}

const refused = (base: string): Promise<boolean> =>
  fetch(`${base}/healthz`).then(
    () => false,
    () => true,
  );

// each test starts the server twice (a restart shows what was kept)
describe('stopping the server process', { timeout: 240_000 }, () => {
  it('SIGTERM: no new connection is taken, the request in flight is answered, and the process exits 0', async () => {
    const { server, base } = await startServer();
    const token = await newTenant(base);
    const held = requestInFlight(base, '/v1/tokens', token, { name: 'finished during the shutdown' });
    await held.begun;

    server.child.kill('SIGTERM');
    await server.line((entry) => entry.msg === 'shutting down: no new requests; finishing those in flight and the sweep pass');
    expect(await refused(base)).toBe(true);
    expect(server.child.exitCode).toBeNull();

    const answer = await held.finish();
    expect(answer.status).toBe(201);
    expect(answer.body.name).toBe('finished during the shutdown');
    expect(await server.exited).toBe(0);
    expect(server.output()).toMatch(/"msg":"stopped"/);

    // committed before the stop, there after it
    const again = await startServer();
    const tokens = await json(again.base, 'GET', '/v1/tokens', undefined, token);
    expect(tokens.status).toBe(200);
    expect(JSON.stringify(tokens.body)).toContain('finished during the shutdown');
    again.server.child.kill('SIGTERM');
    expect(await again.server.exited).toBe(0);
  });

  it('a second SIGTERM exits 1 at once, without waiting for the request in flight; what was committed stays', async () => {
    const { server, base } = await startServer();
    const token = await newTenant(base);
    expect((await json(base, 'POST', '/v1/tokens', { name: 'committed before the signals' }, token)).status).toBe(201);
    const held = requestInFlight(base, '/v1/tokens', token, { name: 'never sent' });
    await held.begun;

    server.child.kill('SIGTERM');
    await server.line((entry) => String(entry.msg).startsWith('shutting down'));
    const second = performance.now();
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(1);
    const exitMs = performance.now() - second;
    // at once: the grace (30 s) is not waited for; the bound leaves room for a loaded machine
    expect(exitMs).toBeLessThan(3_000);
    expect(server.output()).toMatch(/"msg":"second signal: exiting at once"/);

    const again = await startServer();
    const tokens = await json(again.base, 'GET', '/v1/tokens', undefined, token);
    expect(JSON.stringify(tokens.body)).toContain('committed before the signals');
    expect(JSON.stringify(tokens.body)).not.toContain('never sent');
    again.server.child.kill('SIGTERM');
    expect(await again.server.exited).toBe(0);
  });

  it('leaves webhook deliveries in the outbox: the POST in flight ends at its timeout, none is left sending, and the next process has them all', async () => {
    // a receiver that never answers: the delivery in flight can only end at WEBHOOK_TIMEOUT_MS
    const received: IncomingMessage[] = [];
    let arrived!: () => void;
    const first = new Promise<void>((resolve) => (arrived = resolve));
    const receiver = createServer((req) => (received.push(req), arrived()));
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const { server, base } = await startServer();
      const token = await newTenant(base);
      const url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
      const endpoint = (await json(base, 'POST', '/v1/webhook-endpoints', { url }, token)).body;
      expect((await json(base, 'POST', `/v1/webhook-endpoints/${endpoint.id}/test`, {}, token)).status).toBe(202);
      await first;
      // another one due, sent or not by the time the process stops
      expect((await json(base, 'POST', `/v1/webhook-endpoints/${endpoint.id}/test`, {}, token)).status).toBe(202);

      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);

      const again = await startServer();
      const attempts = (await json(again.base, 'GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries`, undefined, token)).body;
      expect(new Set(attempts.map((a: { event_id: string }) => a.event_id)).size).toBe(2);
      for (const attempt of attempts) {
        expect(['pending', 'failed']).toContain(attempt.status);
        expect(attempt.next_attempt_at).not.toBeNull();
      }
      again.server.child.kill('SIGTERM');
      expect(await again.server.exited).toBe(0);
    } finally {
      for (const req of received) req.socket.destroy();
      receiver.close();
    }
  });
});
