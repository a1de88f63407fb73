import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MikroStorage } from '../../adapters/storage/mikro-storage.ts';

describe('the embedded database (memory settings, docs/benchmarks.md)', () => {
  it('creates a new directory\'s database and runs it with 16 MB of shared buffers, across a restart', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'gcp-pglite-')), 'data');
    try {
      const storage = await MikroStorage.open({ kind: 'pglite', dataDir });
      try {
        expect(existsSync(join(dataDir, 'PG_VERSION'))).toBe(true);
        expect(await storage.execute('show shared_buffers')).toEqual([{ shared_buffers: '16MB' }]);
      } finally {
        await storage.close();
      }
      // a second open finds the cluster and keeps it
      const again = await MikroStorage.open({ kind: 'pglite', dataDir });
      expect(await again.execute('show shared_buffers')).toEqual([{ shared_buffers: '16MB' }]);
      await again.close();
    } finally {
      rmSync(join(dataDir, '..'), { recursive: true, force: true });
    }
  });
});
