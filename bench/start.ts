/**
 * Benchmark of starting the server: seconds from the command to the first 200 from GET /healthz, side by side,
 *   direct      the compiled server started by hand: node <npm start's flags> dist/hosts/http/main.js
 *   fresh       `npm start` with dist/ removed (a fresh clone's first start: tsc and Vite, side by side)
 *   before      `npm start` as it was before the build step checked its inputs (prestart: tsc, then vite build, every
 *               start), in a copy of this tree whose package.json has that prestart
 *   again       a second `npm start` with nothing changed
 *   touched     `npm start` after `touch core/money.ts` (its time changed, its content did not)
 *   edited      `npm start` after one core file changed (a comment appended to core/money.ts; put back after)
 * and two ways not taken (docs/decisions.md, "npm start builds only what changed"), nothing changed for either:
 *   incremental tsc with its build info (the build step's own tsc), then the server (no check of the inputs first)
 *   stripped    the server's TypeScript run by Node's type stripping (no tsc: node <flags> hosts/http/main.ts)
 * each BENCH_RUNS times (default 3), reporting the median and the spread, with the machine's load beside them
 * (BENCH_ONLY=<regular expression> measures only the starts whose names match, beside the direct one).
 * The server runs on one embedded data directory made before the first measure (a restart's case).
 * `npm run bench:start`. It deletes and rebuilds this checkout's dist/.
 */
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const ROOT = resolve(import.meta.dirname, '..');
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const EDITED = 'core/money.ts';
const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
const START = scripts.start!.trim();
const BEFORE_PRESTART = 'tsc -p tsconfig.build.json && vite build -c hosts/console/vite.config.ts';
/** What a clone holds that `npm start` reads. */
const TREE = ['index.ts', 'core', 'adapters', 'hosts', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', '.npmrc'];

/** A copy of the tree whose `npm start` is the one before (its prestart builds everything, every time). */
function treeAsBefore(): string {
  const copy = mkdtempSync(join(os.tmpdir(), 'gcp-bench-start-before-'));
  for (const name of TREE) cpSync(join(ROOT, name), join(copy, name), { recursive: true, filter: (path) => !path.includes('/node_modules') });
  symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(copy, 'node_modules'));
  const manifest = JSON.parse(readFileSync(join(copy, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  manifest.scripts.prestart = BEFORE_PRESTART;
  writeFileSync(join(copy, 'package.json'), JSON.stringify(manifest, null, 2));
  return copy;
}

interface Scenario {
  name: string;
  /** Run (untimed) before the measure. */
  prepare?: () => void;
  /** Run (untimed) after it. */
  after?: () => void;
  command: [string, ...string[]];
  /** Where it runs; this checkout by default. */
  cwd?: string;
  /** What its build step must have said, checked so a figure is never of the wrong case. */
  expect?: RegExp[];
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

const PATH = `${join(ROOT, 'node_modules/.bin')}:${process.env.PATH}`;

/** Seconds from spawning `command` (its own process group) to /healthz answering 200; then the group is stopped. */
async function measure(scenario: Scenario, dataDir: string): Promise<{ seconds: number; load: number }> {
  const port = await freePort();
  const load = os.loadavg()[0]!;
  const started = performance.now();
  const [command, ...args] = scenario.command;
  const child = spawn(command, args, {
    cwd: scenario.cwd ?? ROOT,
    detached: true,
    env: { PATH, HOME: process.env.HOME ?? '/tmp', PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((gone) => child.once('exit', () => gone()));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${scenario.name} exited (${child.exitCode}):\n${output}`);
      if (performance.now() - started > 600_000) throw new Error(`${scenario.name}: /healthz did not answer within 600 s`);
      if (await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false)) break;
      await sleep(25);
    }
    const seconds = (performance.now() - started) / 1000;
    for (const said of scenario.expect ?? []) if (!said.test(output)) throw new Error(`${scenario.name}: its build step did not say ${said}:\n${output}`);
    return { seconds, load };
  } finally {
    process.kill(-child.pid!, 'SIGTERM');
    await Promise.race([exited, sleep(15_000).then(() => process.kill(-child.pid!, 'SIGKILL'))]);
  }
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

function buildNow(): void {
  execFileSync(process.execPath, ['hosts/build/start-build.ts'], { cwd: ROOT, stdio: 'ignore', env: { ...process.env, PATH } });
}

async function main(): Promise<void> {
  const original = readFileSync(join(ROOT, EDITED));
  const before = treeAsBefore();
  const restore = () => {
    writeFileSync(join(ROOT, EDITED), original);
    buildNow();
  };
  const scenarios: Scenario[] = [
    { name: 'direct: node dist/hosts/http/main.js', prepare: buildNow, command: ['sh', '-c', START] },
    { name: 'again: npm start, nothing changed', prepare: buildNow, command: ['npm', 'start'], expect: [/build: skipped/] },
    { name: `touched: npm start after touch ${EDITED}`, prepare: () => utimesSync(join(ROOT, EDITED), new Date(), new Date()), command: ['npm', 'start'], expect: [/build: skipped/] },
    {
      name: `edited: npm start after ${EDITED} changed`,
      prepare: () => appendFileSync(join(ROOT, EDITED), `// bench/start.ts ${Date.now()}\n`),
      command: ['npm', 'start'],
      expect: [/build: server: core\/money\.ts; building/, /build: console unchanged, skipped/],
      after: restore,
    },
    { name: 'fresh: npm start, dist/ removed', prepare: () => rmSync(join(ROOT, 'dist'), { recursive: true, force: true }), command: ['npm', 'start'], expect: [/build: server built/, /build: console built/] },
    { name: 'before: npm start, tsc and vite build every start', cwd: before, command: ['npm', 'start'] },
    {
      name: 'not taken: incremental tsc, nothing changed',
      prepare: buildNow,
      command: ['sh', '-c', `tsc -p tsconfig.build.json --incremental --tsBuildInfoFile dist/tsconfig.build.tsbuildinfo --noCheck && ${START}`],
    },
    { name: 'not taken: type stripping (node hosts/http/main.ts)', command: ['sh', '-c', START.replace('dist/hosts/http/main.js', 'hosts/http/main.ts')] },
  ];

  const dataDir = mkdtempSync(join(os.tmpdir(), 'gcp-bench-start-'));
  try {
    buildNow();
    console.log('making the data directory (a first start, not measured)');
    await measure({ name: 'first', command: ['sh', '-c', START] }, dataDir);
    const only = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : null;
    if (only) scenarios.splice(0, scenarios.length, ...scenarios.filter((s, i) => i === 0 || only.test(s.name)));
    const results = new Map<string, { seconds: number; load: number }[]>(scenarios.map((s) => [s.name, []]));
    for (let run = 1; run <= RUNS; run++) {
      for (const scenario of scenarios) {
        scenario.prepare?.();
        try {
          const result = await measure(scenario, dataDir);
          results.get(scenario.name)!.push(result);
          console.log(`run ${run}: ${scenario.name}: ${result.seconds.toFixed(2)} s (load ${result.load.toFixed(1)})`);
        } finally {
          scenario.after?.();
        }
      }
    }
    const direct = median(results.get(scenarios[0]!.name)!.map((r) => r.seconds));
    console.log(`\nTo /healthz, ${RUNS} runs each, median (min-max); Node ${process.version}, ${os.cpus().length} cores, ${new Date().toISOString().slice(0, 16)}Z\n`);
    // each run's start against that run's direct start (measured just before it): the load moves less between them
    const directs = results.get(scenarios[0]!.name)!.map((r) => r.seconds);
    console.log('| start | median s | min-max s | x direct (medians) | x direct (median of each run\'s) | load (1 min) at the runs |');
    console.log('|---|---:|---:|---:|---:|---|');
    for (const scenario of scenarios) {
      const runs = results.get(scenario.name)!;
      const seconds = runs.map((r) => r.seconds);
      const ratios = seconds.map((value, i) => value / directs[i]!);
      console.log(
        `| ${scenario.name} | ${median(seconds).toFixed(2)} | ${Math.min(...seconds).toFixed(2)}-${Math.max(...seconds).toFixed(2)} | ${(median(seconds) / direct).toFixed(2)} | ${median(ratios).toFixed(2)} | ${runs.map((r) => r.load.toFixed(1)).join(', ')} |`,
      );
    }
  } finally {
    writeFileSync(join(ROOT, EDITED), original);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(before, { recursive: true, force: true });
  }
}

await main();
