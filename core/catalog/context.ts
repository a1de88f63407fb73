import { DomainError } from '../errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { Ids } from '../ports/ids.ts';
import type { SecretBox, Sha256 } from '../ports/secret-box.ts';
import type { Storage } from '../ports/storage.ts';

/** What the catalog's use cases work with. `secretBox` null: no secrets key is configured, registry passwords are refused. */
export interface CatalogContext {
  storage: Storage;
  clock: Clock;
  ids: Ids;
  hashing: Sha256;
  secretBox: SecretBox | null;
}

/** A key or image that templates still name cannot be deleted: the 409 says which templates and what to do. */
export const inUse = (what: string, templateIds: string[]) =>
  new DomainError('CONFLICT', `${what} is used by template(s) ${templateIds.join(', ')}: remove it from them (PATCH) or delete them first`);

/** The fields of a patch that were sent (undefined: left out). */
export function definedOnly<T extends object>(patch: T): Partial<T> {
  return Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined)) as Partial<T>;
}
