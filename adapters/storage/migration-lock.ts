import pg from 'pg';
import type { MikroORM } from '@mikro-orm/sql';
import { migrations } from './migrations/index.ts';

/** The database holds migrations this build does not know: a newer version ran on it. */
export class SchemaAheadError extends Error {
  readonly unknown: string[];

  constructor(unknown: string[]) {
    super(
      `the database has migrations this version does not know (${unknown.join(', ')}): a newer version of gpu-control-plane ` +
        `migrated it. Run that version (or newer) here too; this one refuses to start rather than work on a schema it cannot read.`,
    );
    this.name = 'SchemaAheadError';
    this.unknown = unknown;
  }
}

/**
 * Holds a session advisory lock on its own connection while `work` runs, waiting for it: replicas started
 * together migrate one after the other (the others then find nothing pending), instead of racing on
 * `create table` (a unique violation on pg_type) and crashing.
 */
export async function underAdvisoryLock<T>(url: string, key: string, work: () => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, application_name: 'gpu-control-plane migrations' });
  client.on('error', () => undefined); // a dropped connection releases the lock; the migration itself then fails on its own
  await client.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [key]);
    try {
      return await work();
    } finally {
      await client.query('select pg_advisory_unlock($1)', [key]).catch(() => undefined);
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Refuses a database some newer build migrated further than this one knows. */
export async function refuseNewerSchema(orm: MikroORM): Promise<void> {
  const known = new Set(migrations.map((migration) => migration.name));
  const executed = await orm.migrator.getExecuted();
  const unknown = executed.map((row) => row.name).filter((name) => !known.has(name));
  if (unknown.length > 0) throw new SchemaAheadError(unknown);
}
