import { invalidInput } from '../errors.ts';
import type { CatalogContext } from './context.ts';
import { CATALOG_LIMITS } from './limits.ts';
import type { Image } from './records.ts';

/** What a rental needs of an image: the reference, the command, and the registry credentials in the clear. */
export interface ImageForRental {
  imageId: string | null;
  image: string;
  command: string | null;
  registryAuth: { username: string; password: string } | null;
}

/** How the configured secrets key fits what the database holds (checked at start). */
export type SecretsKeyCheck = 'ok' | 'nothing-sealed' | 'no-key' | 'wrong-key';

const NO_SECRETS_KEY =
  'this server keeps no registry passwords: its operator has not set SECRETS_KEY (needed with PostgreSQL); save the image without registry_password, or ask the operator to set it';

/** A registry password sealed with the SecretBox on the way in, bound to its image's id. */
export function sealPassword(ctx: CatalogContext, password: string, imageId: string): string {
  if (!ctx.secretBox) throw invalidInput(['body', 'registry_password'], NO_SECRETS_KEY);
  if (password.length === 0) throw invalidInput(['body', 'registry_password'], 'must not be empty; send null to remove it');
  if (password.length > CATALOG_LIMITS.registryPassword) throw invalidInput(['body', 'registry_password'], `at most ${CATALOG_LIMITS.registryPassword} characters`);
  return ctx.secretBox.seal(password, imageId);
}

/** An image for a rental, its registry password opened: the only answer that carries it. */
export function openedImage(ctx: CatalogContext, image: Image): ImageForRental {
  let registryAuth: ImageForRental['registryAuth'] = null;
  if (image.registryPasswordSealed !== null) {
    if (!ctx.secretBox) throw new Error(`image ${image.id} has a sealed registry password and this server has no secrets key`);
    registryAuth = { username: image.registryUsername ?? '', password: ctx.secretBox.open(image.registryPasswordSealed, image.id) };
  }
  return { imageId: image.id, image: image.image, command: image.command, registryAuth };
}

/** Whether the secrets key opens what the database holds: start-up refuses 'no-key' and 'wrong-key'. */
export async function checkSecretsKey(ctx: CatalogContext): Promise<SecretsKeyCheck> {
  const sample = await ctx.storage.read((uow) => uow.images.anySealed());
  if (!sample) return 'nothing-sealed';
  if (!ctx.secretBox) return 'no-key';
  try {
    ctx.secretBox.open(sample.sealed, sample.imageId);
    return 'ok';
  } catch {
    return 'wrong-key';
  }
}
