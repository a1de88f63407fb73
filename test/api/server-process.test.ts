import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshPostgres, postgresReachable } from '../support/database.ts';

const MAIN = resolve(import.meta.dirname, '../../hosts/http/main.ts');
const SWEEP = resolve(import.meta.dirname, '../../hosts/sweep/main.ts');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real entry point (what `npm start` runs) as its own process. */
function startServer(env: Record<string, string>, onLine?: (line: string, kill: () => void) => void, args: string[] = [MAIN]): Promise<Run> {
  return new Promise((done) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      stdout += text;
      for (const line of text.split('\n').filter(Boolean)) onLine?.(line, () => child.kill('SIGTERM'));
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // a ceiling, not a wait: a fresh embedded database on a loaded machine takes well over 30 s to open
    const guard = setTimeout(() => child.kill('SIGKILL'), 180_000);
    child.on('exit', (code) => {
      clearTimeout(guard);
      done({ code, stdout, stderr });
    });
  });
}

describe('the server process', { timeout: 240_000 }, () => {
  it('refuses to start on a bad variable, naming it, with exit code 2', async () => {
    const run = await startServer({ PORT: 'eighty', DATA_DIR: 'memory://' });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/PORT/);
  });

  it('refuses to start a real cloud on the embedded card processor unasked, naming STRIPE_SECRET_KEY and PAYMENTS (exit code 2)', async () => {
    const unpaid = { VAST_API_KEY: 'vast-key', RENTALS_OPEN: 'false', STRIPE_SECRET_KEY: '', STRIPE_WEBHOOK_SECRET: '', PAYMENTS: '', DATA_DIR: 'memory://' };
    const run = await startServer(unpaid);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/vast is enabled/);
    expect(run.stderr).toMatch(/STRIPE_SECRET_KEY/);
    expect(run.stderr).toMatch(/PAYMENTS=manual/);
  });

  it('starts on embedded defaults, answers, and shuts down cleanly on SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gcp-server-'));
    let health: unknown;
    let summary: { status: number; body: any } | undefined;
    try {
      const run = await startServer({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info', DATABASE_URL: '' }, (line, kill) => {
        const entry = JSON.parse(line) as { port?: number };
        if (entry.port) {
          const base = `http://127.0.0.1:${entry.port}`;
          fetch(`${base}/healthz`)
            .then((r) => r.json())
            .then(async (body) => {
              health = body;
              const res = await fetch(`${base}/v1/market/summary`);
              summary = { status: res.status, body: await res.json() };
              kill();
            })
            .catch(kill);
        }
      });
      expect(health).toEqual({ status: 'ok', version: '0.1.0' });
      // the embedded default market: the sandbox, renting open
      expect(summary?.status).toBe(200);
      expect(summary?.body).toMatchObject({ stale: false, rentals_open: true });
      expect(summary?.body.families.length).toBeGreaterThanOrEqual(12);
      expect(run.stdout).toMatch(/"providers":\["sandbox"\]/);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/"msg":"stopped"/);
      expect(run.stdout).toMatch(/embedded PGlite/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

const onPostgres = await postgresReachable();

describe('the sweep daemon', { timeout: 240_000 }, () => {
  it('refuses embedded storage, naming DATABASE_URL', async () => {
    const run = await startServer({ DATABASE_URL: '', DATA_DIR: 'memory://' }, undefined, [SWEEP, '--once']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/DATABASE_URL/);
  });

  it.runIf(onPostgres)('runs a pass on PostgreSQL and exits', async () => {
    const database = await freshPostgres();
    try {
      const url = database.target.kind === 'postgres' ? database.target.url : '';
      const run = await startServer({ DATABASE_URL: url, LOG_LEVEL: 'info' }, undefined, [SWEEP, '--once']);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/"msg":"billing sweep"/);
      expect(run.stdout).toMatch(/"blocksPaid":0/);
    } finally {
      await database.drop();
    }
  });
});
