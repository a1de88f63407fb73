import type { Scope } from './scopes.ts';

/** A person's role in a tenant (docs/decisions.md, "One tree of authority"). */
export const ROLES = ['owner', 'admin', 'member', 'billing', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export const isRole = (value: string): value is Role => (ROLES as readonly string[]).includes(value);

/**
 * What a person's link (and every console session under it) holds. A member's `manage` reaches only what it made
 * itself (its tokens, SSH keys, images, templates: acts-on.ts): everything about people needs root, which a member
 * never is, and reading people or registering a webhook endpoint needs manage over the whole tenant (tenant-manage.ts).
 */
export const ROLE_SCOPES: Record<Role, readonly Scope[]> = {
  owner: ['read', 'rent', 'manage', 'billing'],
  admin: ['read', 'rent', 'manage', 'billing'],
  member: ['read', 'rent', 'manage'],
  billing: ['read', 'billing'],
  viewer: ['read'],
};

/** Roles whose sessions are root: they link and remove people, invite, write the budget. */
export const ROOT_ROLES: readonly Role[] = ['owner', 'admin'];

/** Only members carry limits of their own; the other roles are defined by their scopes alone. */
export const roleTakesLimits = (role: Role): boolean => role === 'member';

/** Roles below an owner, the most first: what a person under another may be narrowed to. */
const NARROWED: readonly Role[] = ['admin', 'member', 'billing', 'viewer'];

/**
 * The role a person keeps under a parent now holding `held` (docs/decisions.md, "One tree of authority"): their own when
 * its scopes fit, else the largest role within both their own and the parent's (viewer at least: every role reads).
 * Never more than their own, so a change above them never widens them.
 */
export function roleWithin(role: Role, held: readonly Scope[]): Role {
  const fits = (candidate: Role, within: readonly Scope[]) => ROLE_SCOPES[candidate].every((scope) => within.includes(scope));
  if (fits(role, held)) return role;
  const both = ROLE_SCOPES[role].filter((scope) => held.includes(scope));
  return NARROWED.find((candidate) => fits(candidate, both)) ?? 'viewer';
}
