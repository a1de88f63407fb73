/**
 * `npm start`'s build step (its prestart): compiles the server (tsc) and builds the console (Vite) only when their
 * inputs changed since the last build, so a start with nothing changed goes straight to the compiled server
 * (docs/decisions.md, "npm start builds only what changed").
 *
 * Each part's inputs are hashed file by file (SHA-256 of the content) and compared with dist/build-stamp.json,
 * written after a part built. A changed server input runs tsc with its build info kept in dist (only the files the
 * change reaches are written again); a changed console input runs Vite; an unchanged part is skipped
 * and no file of dist is written. Both parts build side by side when both changed (a fresh clone).
 * `node hosts/build/start-build.ts` runs it by hand; deleting dist/ builds everything again.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
const DIST = join(ROOT, 'dist');
export const STAMP = join(DIST, 'build-stamp.json');
const BUILD_INFO = join(DIST, 'tsconfig.build.tsbuildinfo');
const CONSOLE = 'hosts/console';
const VITE_CONFIG = `${CONSOLE}/vite.config.ts`;
/** Read by both parts: a new dependency or compiler version builds again. */
const SHARED_INPUTS = ['package.json', 'package-lock.json'];

/** Path (relative to the root, with /) to SHA-256 of its content. */
type Hashes = Record<string, string>;
interface Stamp {
  server?: Hashes;
  console?: Hashes;
}

export interface PartPlan {
  name: 'server' | 'console';
  changed: string[];
  /** The output whose absence builds again whatever the stamp says. */
  output: string;
}

const toPosix = (path: string): string => path.split(sep).join('/');

function walk(dir: string, keep: (path: string) => boolean): string[] {
  const at = join(ROOT, dir);
  if (!existsSync(at)) return [];
  if (!statSync(at).isDirectory()) return keep(dir) ? [dir] : [];
  return readdirSync(at, { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (!keep(path)) return [];
    return entry.isDirectory() ? walk(path, keep) : [path];
  });
}

/**
 * tsconfig.build.json's include and exclude, applied as tsc applies them to this project's patterns: a path, or
 * `**` followed by a file name pattern with one `*`. Any other pattern stops the build step (it would guess).
 */
export function serverInputs(): string[] {
  const config = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8')) as { include: string[]; exclude: string[] };
  const excluded = config.exclude.map((pattern) => {
    const name = /^\*\*\/\*([^*/]+)$/.exec(pattern);
    if (name) return (path: string) => path.endsWith(name[1]!);
    if (pattern.includes('*')) throw new Error(`tsconfig.build.json: exclude pattern ${pattern} is not understood by ${relative(ROOT, import.meta.filename)}`);
    return (path: string) => path === pattern || path.startsWith(`${pattern}/`);
  });
  const keep = (path: string) => !excluded.some((isExcluded) => isExcluded(path));
  return [...config.include.flatMap((dir) => walk(dir, keep)), 'tsconfig.json', 'tsconfig.build.json', ...SHARED_INPUTS];
}

/** Everything under hosts/console, and what the last build read from elsewhere (the API client). */
export function consoleInputs(stamp: Stamp): string[] {
  const recorded = Object.keys(stamp.console ?? {});
  return [...new Set([...walk(CONSOLE, () => true), ...recorded, ...SHARED_INPUTS])];
}

function hashes(paths: string[]): Hashes {
  const result: Hashes = {};
  for (const path of [...new Set(paths)].sort()) {
    const file = join(ROOT, path);
    result[path] = existsSync(file) ? createHash('sha256').update(readFileSync(file)).digest('hex') : 'missing';
  }
  return result;
}

/** The inputs that differ from the stamp's (added, removed, changed), in path order. */
export function changedInputs(now: Hashes, before: Hashes | undefined): string[] {
  if (!before) return ['(no earlier build)'];
  const paths = new Set([...Object.keys(now), ...Object.keys(before)]);
  return [...paths].filter((path) => now[path] !== before[path]).sort();
}

function readStamp(): Stamp {
  try {
    return JSON.parse(readFileSync(STAMP, 'utf8')) as Stamp;
  } catch {
    return {};
  }
}

function run(args: string[]): Promise<void> {
  return new Promise((done, failed) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: 'inherit' });
    child.once('error', failed);
    child.once('exit', (code, signal) => (code === 0 ? done() : failed(new Error(`${args.slice(0, 2).map((a) => relative(ROOT, a)).join(' ')} ended with ${signal ?? `exit code ${code}`}`))));
  });
}

/**
 * tsc's emit without its type check (`--noCheck`): the files written are byte for byte those of a checked build
 * (isolatedModules, verbatimModuleSyntax, no enums: each file's output is its own), in a third of the time. The
 * check is `npm run typecheck`, run by `npm test` and CI, not by every start.
 */
async function buildServer(): Promise<void> {
  await run([join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--incremental', '--tsBuildInfoFile', BUILD_INFO, '--noCheck']);
}

/** Vite in this process; returns the files of the project the bundle was made of (recorded as console inputs). */
async function buildConsole(): Promise<string[]> {
  const { build } = await import('vite');
  const result = await build({ configFile: join(ROOT, VITE_CONFIG), mode: 'production' });
  const outputs = (Array.isArray(result) ? result : [result]) as { output: { type: string; moduleIds?: string[] }[] }[];
  const ids = outputs.flatMap(({ output }) => output.flatMap((item) => (item.type === 'chunk' ? (item.moduleIds ?? []) : [])));
  return ids.filter((id) => id.startsWith(ROOT + sep) && !id.includes(`${sep}node_modules${sep}`)).map((id) => toPosix(relative(ROOT, id.split('?')[0]!)));
}

const seconds = (since: number): string => `${((performance.now() - since) / 1000).toFixed(1)} s`;

function describeChange(changed: string[]): string {
  const shown = changed.slice(0, 3).join(', ');
  return changed.length > 3 ? `${shown} and ${changed.length - 3} more` : shown;
}

async function main(): Promise<void> {
  const began = performance.now();
  const stamp = readStamp();
  const server = hashes(serverInputs());
  const console_ = hashes(consoleInputs(stamp));
  const plans: PartPlan[] = [
    { name: 'server', changed: changedInputs(server, stamp.server), output: 'dist/hosts/http/main.js' },
    { name: 'console', changed: changedInputs(console_, stamp.console), output: 'dist/console/index.html' },
  ];
  for (const plan of plans) if (plan.changed.length === 0 && !existsSync(join(ROOT, plan.output))) plan.changed = [`(${plan.output} is missing)`];
  const due = plans.filter((plan) => plan.changed.length > 0);
  if (due.length === 0) {
    console.log(`build: skipped, nothing changed since the last build (${Object.keys(server).length + Object.keys(console_).length} inputs checked in ${seconds(began)})`);
    return;
  }
  for (const plan of plans) console.log(plan.changed.length === 0 ? `build: ${plan.name} unchanged, skipped` : `build: ${plan.name}: ${describeChange(plan.changed)}; building`);
  // a part being built has no valid stamp until it is done: an interrupted build is built again next time
  const next: Stamp = { ...stamp };
  for (const plan of due) delete next[plan.name];
  mkdirSync(DIST, { recursive: true });
  writeFileSync(STAMP, JSON.stringify(next));

  const failures: string[] = [];
  await Promise.all(
    due.map(async (plan) => {
      const started = performance.now();
      try {
        if (plan.name === 'server') {
          await buildServer();
          next.server = server;
        } else {
          const read = await buildConsole();
          next.console = hashes([...walk(CONSOLE, () => true), ...read, ...SHARED_INPUTS]);
        }
        console.log(`build: ${plan.name} built in ${seconds(started)}${plan.name === 'server' ? ' (not type-checked: npm run typecheck)' : ''}`);
      } catch (error) {
        failures.push(`${plan.name}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }),
  );
  writeFileSync(STAMP, JSON.stringify(next));
  if (failures.length > 0) {
    console.error(`build failed (${failures.join('; ')}); fix it and start again`);
    process.exit(1);
  }
}

if (import.meta.filename === process.argv[1]) await main();
