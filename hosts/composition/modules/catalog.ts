import { instanceCachingFactory, type DependencyContainer } from 'tsyringe';
import { NodeSha256 } from '../../../adapters/crypto/aes-gcm-secret-box.ts';
import { CatalogService } from '../../../core/catalog/catalog-service.ts';
import type { SecretBox } from '../../../core/ports/secret-box.ts';
import { basics } from './ports.ts';

/** What a tenant keeps for its rentals: SSH keys, images (registry passwords sealed in the secret box), templates. */
export function registerCatalog(container: DependencyContainer, parts: { secretBox: SecretBox | null }): void {
  container.register(CatalogService, {
    useFactory: instanceCachingFactory((c) => new CatalogService({ ...basics(c), hashing: new NodeSha256(), secretBox: parts.secretBox })),
  });
}
