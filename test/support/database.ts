import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { StorageTarget } from '../../adapters/storage/mikro-storage.ts';

/**
 * Test databases. Suites run on real PostgreSQL when one answers (TEST_DATABASE_URL, default the
 * local server), each test file in a database of its own; otherwise on embedded PGlite.
 * REQUIRE_POSTGRES=1 (set by CI) turns "no server" into a failure instead of a fallback.
 */
const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

let reachable: Promise<boolean> | undefined;

export function postgresReachable(): Promise<boolean> {
  reachable ??= (async () => {
    if (process.env.TEST_STORAGE === 'pglite') return false;
    const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 2000 });
    try {
      await client.connect();
      await client.query('select 1');
      return true;
    } catch (error) {
      if (process.env.REQUIRE_POSTGRES === '1') {
        throw new Error(`REQUIRE_POSTGRES=1 but PostgreSQL at ${ADMIN_URL} does not answer: ${String(error)}`);
      }
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  })();
  return reachable;
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  target: StorageTarget;
  drop(): Promise<void>;
}

/** A fresh, empty PostgreSQL database for one test file. */
export async function freshPostgres(): Promise<TestDatabase> {
  const name = `gcp_test_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`create database ${name}`));
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    target: { kind: 'postgres', url: url.toString(), poolSize: 20 },
    drop: () => admin((c) => c.query(`drop database if exists ${name} with (force)`)).then(() => undefined),
  };
}

export function freshPglite(): TestDatabase {
  return { target: { kind: 'pglite', dataDir: 'memory://' }, drop: async () => undefined };
}

/** PostgreSQL when it answers, PGlite otherwise. */
export async function freshDatabase(): Promise<TestDatabase> {
  return (await postgresReachable()) ? freshPostgres() : freshPglite();
}
