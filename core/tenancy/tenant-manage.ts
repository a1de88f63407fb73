import { DomainError } from '../errors.ts';
import type { Role } from './roles.ts';
import { isRoot, type Token } from './token.ts';

/**
 * Manage over the whole tenant (docs/decisions.md, "One tree of authority"): registering a webhook endpoint, which hears
 * every event of the tenant (people's addresses and payments among them), and reading the tenant's people. A member's
 * `manage` reaches only its own tokens, SSH keys, images and templates, so its sessions and every token under them are
 * refused these; any other credential with `manage` is not: root, and an API token issued with `manage` outside a
 * member's subtree (an operations token an admin issued, a token from the bootstrap secret's line).
 */

/**
 * The role of the person a credential acts for: the nearest session or link along its chain (the credential itself
 * first, then its ancestors nearest first); null when no person stands above it. The nearest, not any: a person linked
 * under someone later demoted to member keeps their own role.
 */
export const personRoleOf = (chain: readonly Token[]): Role | null => chain.find((node) => node.kind !== 'api')?.role ?? null;

/** Whether the credential heading `chain` (itself, then its ancestors nearest first) manages the tenant as a whole. */
export const managesTenant = (chain: readonly Token[]): boolean => {
  const credential = chain[0];
  return credential !== undefined && credential.scopes.includes('manage') && (isRoot(credential) || personRoleOf(chain) !== 'member');
};

export const tenantManageRequired = (what: string): DomainError =>
  new DomainError(
    'TENANT_MANAGE_REQUIRED',
    `${what} reaches the whole tenant, which a member's manage does not: a member's console session and every token under it ` +
      'manage only their own tokens, SSH keys, images and templates; an owner or admin does this, or a token one of them issued with manage',
  );
