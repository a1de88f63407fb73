import { invalidInput } from '../errors.ts';
import { parseContainerReference } from './container-reference.ts';
import { CATALOG_LIMITS } from './limits.ts';
import type { Image } from './records.ts';
import { checkName } from './template-rules.ts';

/** A container reference the registries would take, or a 422 naming the body field. */
export function checkReference(reference: string, field: string): void {
  const parsed = parseContainerReference(reference);
  if (!parsed.ok) throw invalidInput(['body', field], parsed.reason);
}

/** An image whose fields the catalog accepts (name, reference, registry username and command), or a 422 naming the field. */
export function checkedImage(image: Image): Image {
  const name = checkName(image.name);
  checkReference(image.image, 'image');
  if (image.registryUsername !== null && (image.registryUsername.length === 0 || image.registryUsername.length > CATALOG_LIMITS.registryUsername)) {
    throw invalidInput(['body', 'registry_username'], `1 to ${CATALOG_LIMITS.registryUsername} characters, or null`);
  }
  if (image.registryPasswordSealed !== null && image.registryUsername === null) {
    throw invalidInput(['body', 'registry_username'], 'a registry password needs its username; send registry_username (or registry_password: null to remove the password)');
  }
  if (image.command !== null && (image.command.trim().length === 0 || image.command.length > CATALOG_LIMITS.command)) {
    throw invalidInput(['body', 'command'], `1 to ${CATALOG_LIMITS.command} characters, or null for the image's own`);
  }
  return { ...image, name };
}
