import { DomainError, invalidInput } from '../errors.ts';
import type { CatalogContext } from './context.ts';
import type { SshKey } from './records.ts';
import { parseSshPublicKey, sshFingerprint } from './ssh-public-key.ts';
import { checkName } from './template-rules.ts';

export interface SshKeyInput {
  name: string;
  publicKey: string;
}

/**
 * Saves a public key under a name, as the token `tokenId` (only its subtree, or root, deletes it: acts-on.ts); the same
 * key (by fingerprint, whatever its comment) saved twice is a 409 naming the first.
 */
export async function saveSshKey(ctx: CatalogContext, tenantId: string, input: SshKeyInput, tokenId: string): Promise<SshKey> {
  const name = checkName(input.name);
  const parsed = parseSshPublicKey(input.publicKey);
  if (!parsed.ok) throw invalidInput(['body', 'public_key'], parsed.reason);
  const key: SshKey = {
    id: ctx.ids.newId('key'),
    tenantId,
    name,
    publicKey: parsed.key.line,
    keyType: parsed.key.type,
    fingerprint: sshFingerprint((bytes) => ctx.hashing.sha256(bytes), parsed.key.blob),
    tokenId,
    createdAt: ctx.clock.now(),
  };
  const existing = await ctx.storage.transaction((uow) => uow.sshKeys.add(key));
  if (existing) {
    throw new DomainError('CONFLICT', `this key (${key.fingerprint}) is already saved as ${existing.id} ("${existing.name}"); the comment does not make it another key`);
  }
  return key;
}
