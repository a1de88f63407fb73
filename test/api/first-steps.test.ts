import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freshPostgres, postgresReachable, type TestDatabase } from '../support/database.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const SCRIPT = join(ROOT, 'docs/first-steps.sh');
const OPERATOR_KEY = 'first-steps-test-operator-key';

/** The README's walk-through, exactly as a newcomer sees it. */
function readmeWalkThrough(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## First steps'));
  const match = /```bash\n([\s\S]*?)```/.exec(section);
  if (!match) throw new Error('README.md: no ```bash block under "## First steps"');
  return match[1]!;
}

/** `npm start`'s entry point as its own process; resolves with its port once it listens. */
function startServer(env: Record<string, string>): { child: ChildProcess; port: Promise<number> } {
  const child = spawn(process.execPath, [join(ROOT, 'hosts/http/main.ts')], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const port = new Promise<number>((found, failed) => {
    let pending = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) {
        const port = /"port":(\d+)/.exec(line)?.[1];
        if (port) found(Number(port));
      }
    });
    child.on('exit', (code) => failed(new Error(`the server exited (${code}) before listening: ${stderr}`)));
  });
  return { child, port };
}

function runScript(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn('bash', [SCRIPT], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => done({ code, stdout, stderr }));
  });
}

/** Every answer the script showed, in order (each is one line of JSON). */
const answers = (shown: string): any[] =>
  shown
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));

const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe('the README first steps', () => {
  it('are docs/first-steps.sh, verbatim', () => {
    expect(readmeWalkThrough()).toBe(readFileSync(SCRIPT, 'utf8'));
  });

  it('run as written against the real server: the cheapest verified node found is rented, charged and terminated', async () => {
    const database: TestDatabase | null = (await postgresReachable()) ? await freshPostgres() : null;
    if (database) cleanups.push(() => database.drop());
    const dataDir = mkdtempSync(join(tmpdir(), 'gcp-first-steps-'));
    const home = mkdtempSync(join(tmpdir(), 'gcp-first-steps-home-')); // no ~/.ssh: the script makes a key
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }), () => rmSync(home, { recursive: true, force: true }));
    const server = startServer({
      PORT: '0',
      HOST: '127.0.0.1',
      OPERATOR_KEYS: OPERATOR_KEY,
      LOG_LEVEL: 'info', // the listening line carries the port
      DATABASE_URL: database?.target.kind === 'postgres' ? database.target.url : '',
      DATA_DIR: dataDir,
    });
    const exited = new Promise((gone) => server.child.once('exit', gone));
    cleanups.push(async () => {
      server.child.kill('SIGTERM');
      await exited;
    });
    const port = await server.port;
    const base = `http://127.0.0.1:${port}`;

    const run = await runScript({ BASE: base, OPERATOR_KEY, HOME: home, SSH_KEY_FILE: '' });
    expect(run.stderr).not.toMatch(/curl:|Error/);
    expect(run.code).toBe(0);

    const shown = answers(run.stderr);
    const search = shown.find((a) => Array.isArray(a.nodes));
    const cheapestVerified = search.nodes.filter((n: any) => n.price_verified).sort((a: any, b: any) => a.price_per_hour_cents - b.price_per_hour_cents)[0];
    expect(cheapestVerified).toBeDefined();
    const [rented, ...later] = shown.filter((a) => typeof a.id === 'string' && a.id.startsWith('ins_'));
    expect(rented).toMatchObject({ node_id: cheapestVerified.id, rate_cents_per_hour: cheapestVerified.price_per_hour_cents, charged_cents: cheapestVerified.price_per_hour_cents });
    expect(rented.id).toBe(later.at(-1).id);
    expect(later.at(-2)).toMatchObject({ status: 'running', ssh_host: expect.any(String), ssh_port: expect.any(Number) });
    expect(later.at(-1)).toMatchObject({ status: 'terminated', charged_cents: cheapestVerified.price_per_hour_cents });
    expect(run.stdout).toBe(`rented ${cheapestVerified.id} as ${rented.id} (running), then terminated it\n`);

    // the server's own books, read with the operator key: $50 in, the first hour out, nothing running
    const accounts = (await (await fetch(`${base}/v1/operator/accounts`, { headers: { 'x-service-operator-key': OPERATOR_KEY } })).json()) as any[];
    expect(accounts).toEqual([expect.objectContaining({ tenant_id: rented.tenant_id, balance_cents: 5_000 - cheapestVerified.price_per_hour_cents, running_machines: 0 })]);
  }, 90_000);
});
