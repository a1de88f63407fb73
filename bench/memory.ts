/**
 * Benchmark of idle memory: the resident set (VmRSS) of the server process 10 s after GET /healthz first answers,
 * at the default log level, beside a bare Express 5 process measured in the same run:
 *   (a) bare Express answering /healthz, (b) the server on embedded defaults (PGlite in a fresh DATA_DIR),
 *   (c) the server on PostgreSQL (a fresh database on the local server).
 * The server runs as `npm start` runs it: its prestart step, then its node flags and entry point from package.json.
 * Goals: (b) under 250 MB, (c) under 150 MB. `npm run bench:memory` (BENCH_SETTLE_MS moves the 10 s).
 */
import { execSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freshPostgres } from '../test/support/database.ts';

const ROOT = resolve(import.meta.dirname, '..');
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 10_000);
const MB = 1024 * 1024;

const BARE_EXPRESS = `
import express from 'express';
const app = express();
app.get('/healthz', (_req, res) => { res.json({ status: 'ok' }); });
app.listen(Number(process.env.PORT), '127.0.0.1');
`;

interface Measure {
  name: string;
  rssBytes: number;
  peakBytes: number;
  startMs: number;
  goalBytes: number | null;
}

function freePort(): Promise<number> {
  return new Promise((found, failed) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => found(port));
    });
    server.once('error', failed);
  });
}

/** VmRSS and VmHWM of a process, in bytes, from /proc (Linux). */
function residentSet(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: field('VmRSS'), peak: field('VmHWM') };
}

/** The environment the server would see from a shell with nothing set but what is given (the default log level). */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of ['PATH', 'HOME', 'LANG', 'TMPDIR']) if (process.env[name] !== undefined) env[name] = process.env[name];
  return { ...env, ...extra };
}

async function measure(name: string, args: string[], env: Record<string, string>, goalBytes: number | null): Promise<Measure> {
  const port = await freePort();
  const started = performance.now();
  const child: ChildProcess = spawn(process.execPath, args, { cwd: ROOT, env: cleanEnv({ ...env, PORT: String(port), HOST: '127.0.0.1' }), stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((gone) => child.once('exit', () => gone()));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}): ${stderr}`);
      if (performance.now() - started > 60_000) throw new Error(`${name}: /healthz did not answer within 60 s`);
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
      if (ok) break;
      await sleep(50);
    }
    const startMs = performance.now() - started;
    await sleep(SETTLE_MS);
    const { rss, peak } = residentSet(child.pid!);
    return { name, rssBytes: rss, peakBytes: peak, startMs, goalBytes };
  } finally {
    child.kill('SIGTERM');
    await Promise.race([exited, sleep(15_000).then(() => child.kill('SIGKILL'))]);
  }
}

/** `npm start`'s command: its prestart step is run here, its node arguments returned. */
function npmStart(): string[] {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  if (scripts.prestart) execSync(scripts.prestart, { cwd: ROOT, stdio: 'inherit', env: { ...process.env, PATH: `${join(ROOT, 'node_modules/.bin')}:${process.env.PATH}` } });
  const [command, ...args] = scripts.start!.trim().split(/\s+/);
  if (command !== 'node') throw new Error(`npm start runs "${command}", not node: measure it by hand`);
  return args;
}

async function main(): Promise<void> {
  const start = npmStart();
  console.log(`server: node ${start.join(' ')}`);
  const results: Measure[] = [];
  results.push(await measure('bare Express 5', ['--input-type=module', '-e', BARE_EXPRESS], {}, null));

  const dataDir = mkdtempSync(join(os.tmpdir(), 'gcp-bench-memory-'));
  try {
    results.push(await measure('server, embedded defaults (PGlite)', start, { DATA_DIR: dataDir }, 250 * MB));
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }

  const database = await freshPostgres();
  try {
    const url = database.target.kind === 'postgres' ? database.target.url : '';
    results.push(await measure('server, PostgreSQL', start, { DATABASE_URL: url }, 150 * MB));
  } finally {
    await database.drop();
  }

  const bare = results[0]!.rssBytes;
  console.log(`\nIdle memory: VmRSS ${SETTLE_MS / 1000} s after /healthz first answered (Node ${process.version}, ${os.cpus().length} cores, ${new Date().toISOString().slice(0, 10)})\n`);
  console.log('| process | VmRSS MB | over bare MB | VmHWM MB | /healthz after ms | goal | met |');
  console.log('|---|---:|---:|---:|---:|---:|---|');
  for (const r of results) {
    const goal = r.goalBytes === null ? '' : `< ${r.goalBytes / MB}`;
    const met = r.goalBytes === null ? '' : r.rssBytes < r.goalBytes ? 'yes' : '**no**';
    console.log(
      `| ${r.name} | ${(r.rssBytes / MB).toFixed(1)} | ${((r.rssBytes - bare) / MB).toFixed(1)} | ${(r.peakBytes / MB).toFixed(1)} | ${r.startMs.toFixed(0)} | ${goal} | ${met} |`,
    );
  }
  const missed = results.filter((r) => r.goalBytes !== null && r.rssBytes >= r.goalBytes);
  console.log(missed.length === 0 ? '\nBoth goals met.' : `\nGoals missed: ${missed.map((r) => r.name).join(', ')}.`);
}

await main();
