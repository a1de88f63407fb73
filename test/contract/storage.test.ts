import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MikroStorage } from '../../adapters/storage/mikro-storage.ts';
import { migrations } from '../../adapters/storage/migrations/index.ts';
import { freshPglite, freshPostgres, postgresReachable } from '../support/database.ts';
import { storageContract } from './storage-contract.ts';

storageContract('pglite', async () => {
  const storage = await MikroStorage.open(freshPglite().target);
  return { storage, close: () => storage.close() };
});

const onPostgres = await postgresReachable();
describe.runIf(onPostgres)('on PostgreSQL', () => {
  storageContract('postgresql', async () => {
    const database = await freshPostgres();
    const storage = await MikroStorage.open(database.target);
    return {
      storage,
      close: async () => {
        await storage.close();
        await database.drop();
      },
    };
  });
});

describe('embedded PGlite in a data directory', () => {
  it('keeps its data across a restart and migrates only once', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gcp-pglite-'));
    try {
      const first = await MikroStorage.open({ kind: 'pglite', dataDir });
      await first.transaction((uow) =>
        uow.tenants.add(
          { id: 'ten_persisted', name: 'kept', createdAt: new Date('2026-11-21T00:00:00Z') },
          { tenantId: 'ten_persisted', digest: 'd', expiresAt: new Date('2026-11-22T00:00:00Z'), usedAt: null },
        ),
      );
      await first.close();

      const second = await MikroStorage.open({ kind: 'pglite', dataDir });
      expect(await second.read((uow) => uow.tenants.get('ten_persisted'))).toMatchObject({ name: 'kept' });
      const applied = await second.execute<{ name: string }[]>('select name from mikro_orm_migrations order by id');
      expect(applied.map((m) => m.name)).toEqual(migrations.map((m) => m.name));
      await second.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
