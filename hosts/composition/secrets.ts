import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { AesGcmSecretBox } from '../../adapters/crypto/aes-gcm-secret-box.ts';
import { loadOrCreateKeyFile } from '../../adapters/crypto/secrets-key.ts';
import type { CatalogService } from '../../core/catalog/catalog-service.ts';
import type { SecretBox } from '../../core/ports/secret-box.ts';
import { ConfigError, type ControlPlaneConfig } from './config.ts';

/** Where the key that seals registry passwords comes from. */
export type SecretsKeySource = 'SECRETS_KEY' | 'data-dir' | 'in-memory' | 'none';

/**
 * The secret box of this server: SECRETS_KEY when set; else the embedded database's key file (made on first
 * start); an in-memory database gets a key that lives as long as it does; PostgreSQL without SECRETS_KEY gets
 * none, and then keeps no registry passwords (a key in the same database would sit beside what it protects).
 */
export function chooseSecretBox(config: ControlPlaneConfig): { box: SecretBox | null; source: SecretsKeySource } {
  if (config.secretsKey) return { box: new AesGcmSecretBox(config.secretsKey), source: 'SECRETS_KEY' };
  const storage = config.storage;
  if (storage.kind === 'postgres') return { box: null, source: 'none' };
  if (storage.dataDir.startsWith('memory:')) return { box: new AesGcmSecretBox(randomBytes(32)), source: 'in-memory' };
  try {
    return { box: new AesGcmSecretBox(loadOrCreateKeyFile(resolve(storage.dataDir)).key), source: 'data-dir' };
  } catch (error) {
    throw new ConfigError(`invalid configuration:\n  SECRETS_KEY (unset, so the key file of DATA_DIR is used): ${(error as Error).message}`);
  }
}

/**
 * Refuses to start when the database holds registry passwords this server cannot open: rentals of those images
 * would fail one by one, long after the deploy that lost or changed the key.
 */
export async function requireOpenableSecrets(catalog: CatalogService, source: SecretsKeySource): Promise<void> {
  const check = await catalog.checkSecretsKey();
  if (check === 'no-key') {
    throw new ConfigError(
      'invalid configuration:\n  SECRETS_KEY: the database holds registry passwords sealed under a secrets key, and none is set; set SECRETS_KEY to the key they were saved with',
    );
  }
  if (check === 'wrong-key') {
    const where = source === 'SECRETS_KEY' ? 'SECRETS_KEY' : 'SECRETS_KEY (unset, so the key file of DATA_DIR is used)';
    throw new ConfigError(`invalid configuration:\n  ${where}: does not open the registry passwords saved in the database; set it to the key they were saved with`);
  }
}
