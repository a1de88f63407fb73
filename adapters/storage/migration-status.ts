import type { MikroORM } from '@mikro-orm/sql';
import { migrations } from './migrations/index.ts';

/** Where the database's schema stands against this build: migrations not applied yet, and applied ones it does not know. */
export async function migrationStatus(orm: MikroORM): Promise<{ pending: string[]; unknown: string[] }> {
  const executed = new Set((await orm.migrator.getExecuted()).map((row) => row.name));
  const known = new Set(migrations.map((migration) => migration.name));
  return {
    pending: [...known].filter((name) => !executed.has(name)),
    unknown: [...executed].filter((name) => !known.has(name)),
  };
}
