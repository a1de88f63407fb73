import { execFileSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { spawnCommand, stop, type Spawned } from '../support/processes.ts';

const ROOT = resolve(import.meta.dirname, '../..');
/** What a fresh clone has that `npm start` reads (node_modules is linked, as `npm ci` would have made it). */
const CLONE = ['index.ts', 'core', 'adapters', 'hosts', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', '.npmrc'];

let clone: string;
let database: TestDatabase;

/** Each file under dist/ with its modification time (ns). */
function distTimes(): Map<string, bigint> {
  const times = new Map<string, bigint>();
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      else times.set(relative(clone, path), statSync(path, { bigint: true }).mtimeNs);
    }
  };
  visit(join(clone, 'dist'));
  return times;
}

/** `npm start` in the clone on a free port; resolves once /healthz answered, with the process and its output. */
async function npmStart(): Promise<Spawned> {
  const env: Record<string, string> = { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' };
  if (database.target.kind === 'postgres') Object.assign(env, { DATABASE_URL: database.target.url });
  else Object.assign(env, { DATABASE_URL: '', DATA_DIR: 'memory://' });
  const server = spawnCommand('npm', ['start'], env, { cwd: clone, group: true });
  try {
    // the first start compiles the whole server: minutes on a loaded machine
    const entry = await server.line((e) => typeof e.port === 'number' && String(e.msg).includes('listening'), 600_000);
    const health = await fetch(`http://127.0.0.1:${entry.port as number}/healthz`);
    expect(health.status).toBe(200);
    return server;
  } finally {
    await stop(server);
  }
}

beforeAll(async () => {
  clone = mkdtempSync(join(tmpdir(), 'gcp-npm-start-'));
  for (const name of CLONE) cpSync(join(ROOT, name), join(clone, name), { recursive: true, filter: (path) => !path.includes('/node_modules') });
  symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(clone, 'node_modules'));
  database = await freshDatabase();
});

afterAll(async () => {
  await database?.drop();
  if (clone) rmSync(clone, { recursive: true, force: true });
});

describe('npm start (docs/decisions.md, "npm start builds only what changed")', () => {
  it('builds a fresh clone, then starts again without building anything; a changed core file rebuilds the server only', async () => {
    const first = await npmStart();
    expect(first.output()).toMatch(/build: server built/);
    expect(first.output()).toMatch(/build: console built/);
    const built = distTimes();
    expect(built.has('dist/hosts/http/main.js')).toBe(true);
    expect(built.has('dist/console/index.html')).toBe(true);

    const second = await npmStart();
    expect(second.output()).toMatch(/build: skipped, nothing changed since the last build/);
    expect(second.output()).not.toMatch(/built in/);
    expect(distTimes()).toEqual(built);

    // one core file changed: tsc writes that file's output again and no other; the console is left as it was
    appendFileSync(join(clone, 'core/money.ts'), '// changed by test/api/npm-start.test.ts\n');
    const said = execFileSync(process.execPath, ['hosts/build/start-build.ts'], { cwd: clone, encoding: 'utf8' });
    expect(said).toMatch(/build: server: core\/money\.ts; building/);
    expect(said).toMatch(/build: console unchanged, skipped/);
    expect(readFileSync(join(clone, 'dist/core/money.js'), 'utf8')).toContain('// changed by test/api/npm-start.test.ts');
    const after = distTimes();
    const rewritten = [...built].filter(([file, time]) => after.get(file) !== time).map(([file]) => file);
    expect(rewritten.sort()).toEqual(['dist/build-stamp.json', 'dist/core/money.d.ts', 'dist/core/money.js', 'dist/core/money.js.map', 'dist/tsconfig.build.tsbuildinfo']);
  }, 900_000);
});
