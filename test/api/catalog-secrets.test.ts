import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keyFilePath } from '../../adapters/crypto/secrets-key.ts';
import { ConfigError } from '../../hosts/composition/config.ts';
import { startApi, type TestApi } from '../support/api.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';

const PASSWORD = 'registry-secret-42';

const saveImage = async (api: TestApi, token: string, withPassword: boolean) =>
  api.call('POST', '/v1/images', { token, body: { name: 'private', image: 'ghcr.io/acme/app:1', registry_username: 'bot', ...(withPassword && { registry_password: PASSWORD }) } });

describe('the secrets key on PostgreSQL', () => {
  it('without SECRETS_KEY: images are saved, registry passwords refused with 422 naming the field and the variable', async () => {
    const api = await startApi();
    try {
      const { token } = await api.newTenant();
      const refused = await saveImage(api, token, true);
      expect(refused.status).toBe(422);
      expect(refused.body.errors).toEqual([{ loc: ['body', 'registry_password'], msg: expect.stringMatching(/SECRETS_KEY/) }]);
      expect((await saveImage(api, token, false)).status).toBe(201);
    } finally {
      await api.close();
    }
  });

  it('refuses to start when the database holds passwords the key cannot open: no key, or another key; starts with the right one', async () => {
    const database: TestDatabase = await freshDatabase();
    const right = randomBytes(32);
    try {
      const first = await startApi({ secretsKey: right }, { database });
      const tenant = await first.newTenant();
      const image = await saveImage(first, tenant.token, true);
      expect(image.status).toBe(201);
      await first.close();

      await expect(startApi({}, { database })).rejects.toThrow(ConfigError);
      await expect(startApi({}, { database })).rejects.toThrow(/SECRETS_KEY: the database holds registry passwords sealed under a secrets key, and none is set/);
      await expect(startApi({ secretsKey: randomBytes(32) }, { database })).rejects.toThrow(/SECRETS_KEY: does not open the registry passwords saved in the database/);

      const again = await startApi({ secretsKey: right }, { database });
      try {
        expect((await again.plane.services.catalog.imageForRental(tenant.tenantId, image.body.id)).registryAuth).toEqual({ username: 'bot', password: PASSWORD });
      } finally {
        await again.close();
      }
    } finally {
      await database.drop();
    }
  }, 60_000);
});

describe('the secrets key of the embedded default', () => {
  it('is made in DATA_DIR (0600) on the first start and kept: a restart opens what the first start sealed', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gcp-embedded-'));
    const database: TestDatabase = { target: { kind: 'pglite', dataDir }, drop: async () => undefined };
    try {
      const first = await startApi({}, { database });
      const tenant = await first.newTenant();
      const image = await saveImage(first, tenant.token, true);
      expect(image.status).toBe(201);
      await first.close();
      expect(statSync(keyFilePath(dataDir)).mode & 0o777).toBe(0o600);

      const again = await startApi({}, { database });
      try {
        expect((await again.plane.services.catalog.imageForRental(tenant.tenantId, image.body.id)).registryAuth).toEqual({ username: 'bot', password: PASSWORD });
      } finally {
        await again.close();
      }
      // a SECRETS_KEY set later must be the key the passwords were sealed with
      await expect(startApi({ secretsKey: randomBytes(32) }, { database })).rejects.toThrow(/does not open the registry passwords/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
