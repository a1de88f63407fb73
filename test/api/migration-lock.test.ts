import { describe, expect, it } from 'vitest';
import { MikroStorage } from '../../adapters/storage/mikro-storage.ts';
import { SchemaAheadError } from '../../adapters/storage/migration-lock.ts';
import { migrations } from '../../adapters/storage/migrations/index.ts';
import { freshPostgres, postgresReachable } from '../support/database.ts';

describe.runIf(await postgresReachable())('migrations on a shared PostgreSQL', () => {
  it('several replicas opening an empty database at once all come up, each migration applied once', async () => {
    const database = await freshPostgres();
    try {
      const opened = await Promise.allSettled([0, 1, 2, 3].map(() => MikroStorage.open(database.target)));
      const failures = opened.filter((result) => result.status === 'rejected').map((result) => String(result.reason));
      for (const result of opened) if (result.status === 'fulfilled') await result.value.close();
      expect(failures).toEqual([]);
      const storage = await MikroStorage.open(database.target);
      const rows = await storage.execute<{ name: string }[]>('select name from mikro_orm_migrations order by id');
      await storage.close();
      expect(rows.map((row) => row.name)).toEqual(migrations.map((migration) => migration.name));
    } finally {
      await database.drop();
    }
  });

  it('refuses a database a newer version migrated, naming the migrations it does not know', async () => {
    const database = await freshPostgres();
    try {
      const storage = await MikroStorage.open(database.target);
      await storage.execute(`insert into mikro_orm_migrations (name) values ('9999-from-the-future')`);
      await storage.close();
      const refused = await MikroStorage.open(database.target).then(
        (opened) => opened.close().then(() => null),
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(SchemaAheadError);
      expect((refused as Error).message).toMatch(/9999-from-the-future/);
      expect((refused as Error).message).toMatch(/newer version/);
    } finally {
      await database.drop();
    }
  });
});
