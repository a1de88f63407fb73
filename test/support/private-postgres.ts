import { execFile, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Debian's PostgreSQL 15 binaries (PG_BIN to point elsewhere). */
export const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** Whether this machine can start a PostgreSQL cluster of a test's own; REQUIRE_POSTGRES=1 (CI) makes "cannot" a failure. */
export function canRunPrivatePostgres(): boolean {
  const can = existsSync(join(PG_BIN, 'initdb')) && existsSync(join(PG_BIN, 'pg_ctl'));
  if (!can && process.env.REQUIRE_POSTGRES === '1') throw new Error(`REQUIRE_POSTGRES=1 but ${PG_BIN} has no initdb and pg_ctl (set PG_BIN)`);
  return can;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** PostgreSQL refuses to run as root: as root, its binaries run as the `postgres` user. */
const asOwner = (binary: string, args: string[]): [string, string[]] =>
  process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', join(PG_BIN, binary), ...args]] : [join(PG_BIN, binary), args];

const pg = (binary: string, args: string[]) => {
  const [file, all] = asOwner(binary, args);
  return run(file, all, { timeout: 60_000 });
};

/** The processes of a cluster: its postmaster and every process it forked (backends, checkpointer, walwriter...). */
function clusterPids(postmaster: number): number[] {
  const children = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        // the parent pid is the 4th field, after the command name in parentheses
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
      } catch {
        return false;
      }
    })
    .map(Number);
  return [postmaster, ...children];
}

/**
 * A PostgreSQL cluster of one test's own (initdb into a temporary directory, on a free port), so the test may stop,
 * restart or freeze it without disturbing the shared server other tests use.
 */
export interface PrivatePostgres {
  /** postgres://…/postgres on this cluster. */
  url: string;
  /** A fast shutdown: sessions are ended, new connections refused. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** SIGSTOP every process of the cluster: connections open and the kernel accepts new ones, but nothing answers. */
  freeze(): void;
  thaw(): void;
  /** Stops it (immediately) and removes its directory. */
  destroy(): Promise<void>;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'gcp-pg-'));
  if (process.getuid?.() === 0) chownSync(dir, Number((await run('id', ['-u', 'postgres'])).stdout), Number((await run('id', ['-g', 'postgres'])).stdout));
  const data = join(dir, 'data');
  const port = await freePort();
  await pg('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c synchronous_commit=off`;
  const start = async () => void (await pg('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '30', 'start']));
  await start();
  // a test worker that ends without its afterAll (a timeout, a crash) must not leave the cluster running
  const [stopFile, stopArgs] = asOwner('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
  const onExit = () => {
    spawnSync(stopFile, stopArgs, { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  const postmaster = () => Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  let frozen: number[] = [];
  const thaw = () => {
    for (const pid of frozen.reverse()) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        /* gone meanwhile */
      }
    }
    frozen = [];
  };
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: async () => void (await pg('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop'])),
    start,
    freeze() {
      const pids = clusterPids(postmaster());
      // the postmaster first, so it forks nothing new meanwhile
      for (const pid of pids) process.kill(pid, 'SIGSTOP');
      frozen = pids;
    },
    thaw,
    async destroy() {
      process.removeListener('exit', onExit);
      thaw();
      await pg('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
