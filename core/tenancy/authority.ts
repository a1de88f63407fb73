import { DomainError } from '../errors.ts';
import type { Cents } from '../money.ts';
import type { Ids } from '../ports/ids.ts';
import type { UnitOfWork } from '../ports/storage.ts';
import { ROLE_SCOPES, roleTakesLimits, type Role } from './roles.ts';
import { actingNodeId, isActive, isRoot, isUnder, type Token } from './token.ts';
import { personRoleOf } from './tenant-manage.ts';
import { childTokenTerms } from './token-terms.ts';

/**
 * One tree of authority (docs/decisions.md, "One tree of authority"): API tokens, console sessions and people's links
 * are nodes of their tenant's tree. Every node fits under its parent by the one rule of childTokenTerms (scopes a
 * subset; each limit at most the parent's and present where the parent's is); ending a node ends its subtree
 * (end-subtree.ts). These are the checks the routes and use cases share.
 */

/** The secret digest a link node stores: no bearer digests to it, so nobody authenticates as a link. */
const NO_SECRET = 'link';

export const rootRequired = (what: string): DomainError =>
  new DomainError(
    'ROOT_REQUIRED',
    `${what} needs a root credential: a console session of an owner or admin, or a token with every scope and no limit ` +
      '(no spend cap, max_rental_hours, burn ceiling, expiry or idle timeout)',
  );

export function requireRoot(caller: Token, what: string): void {
  if (!isRoot(caller)) throw rootRequired(what);
}

/** Only an owner makes, changes or removes owners: an admin's session and a root token stand below them. */
export function requireOwner(caller: Token, what: string): void {
  if (caller.kind !== 'session' || caller.role !== 'owner') {
    throw new DomainError('ROOT_REQUIRED', `${what} needs an owner's console session; admins and root tokens act on everyone but owners`);
  }
}

/**
 * Only an owner ends an owner's credentials (docs/decisions.md, "One tree of authority": an admin is everything except
 * owners). `callerChain` and `targetChain` are each a credential and its ancestors, nearest first; each is judged by the
 * person it acts for, the nearest session or link along it (personRoleOf). A credential acting for a person who is not
 * an owner (an admin's session and every token under it) may not revoke a session or token acting for an owner; a root
 * token with no person above it (the bootstrap secret's line) is the tenant's own root and still may.
 */
export function requireOwnerOver(callerChain: readonly Token[], targetChain: readonly Token[], what: string): void {
  if (personRoleOf(targetChain) !== 'owner') return;
  const acting = personRoleOf(callerChain);
  if (acting === null || acting === 'owner') return;
  throw new DomainError(
    'OWNER_REQUIRED',
    `${what} is an owner's credential and needs an owner: only an owner's session, a token under it or a root token with no person above it ` +
      `ends an owner's sessions and tokens; this credential acts for a person whose role is ${acting}, and an admin acts on everyone but owners`,
  );
}

/**
 * Whether the node an inviter acted for (a person's link, or a root API token) still holds the authority the
 * invitation needs when it is accepted: live, and root (an owner's, for an owner). An invitation is worth no more
 * than who stands behind it now: removing, demoting or revoking the inviter voids what they invited.
 */
export function stillInvites(node: Token | undefined, role: Role, now: Date): boolean {
  if (!node || !isActive(node, now)) return false;
  if (node.kind === 'api') return role !== 'owner' && isRoot(node);
  return node.role === 'owner' || (role !== 'owner' && node.role === 'admin');
}

/** What a person's link asks for: a role, and a member's limits. */
export interface LinkTerms {
  role: Role;
  spendLimitCents?: Cents | null;
  maxRentalHours?: number | null;
}

/** Limits only a member carries; asking them for another role is a mistake the caller should hear of. */
export function checkLimitsFitRole(terms: LinkTerms): void {
  const asked = (terms.spendLimitCents ?? null) !== null || (terms.maxRentalHours ?? null) !== null;
  if (asked && !roleTakesLimits(terms.role)) {
    throw new DomainError('INVALID_INPUT', `body.spend_limit_usd: only a member carries a spend limit or max_rental_hours; a ${terms.role} has none`, [
      { loc: ['body', 'spend_limit_usd'], msg: `only a member carries limits; a ${terms.role} has none` },
    ]);
  }
}

/**
 * A person's link node under `parentChain` (the linking credential's acting node and its ancestors, nearest first; empty
 * for a tenant's first person or an operator's invitation), made to fit by the one rule.
 */
export function newLinkNode(ids: Ids, tenantId: string, parentChain: readonly Token[], terms: LinkTerms, name: string | null, now: Date): Token {
  checkLimitsFitRole(terms);
  const parent = parentChain[0] ?? null;
  const fitted = parent
    ? childTokenTerms(parentChain, { scopes: [...ROLE_SCOPES[terms.role]], ...limitsOf(terms), idleTimeoutMinutes: parent.idleTimeoutMinutes }, now)
    : { scopes: [...ROLE_SCOPES[terms.role]], spendLimitCents: terms.spendLimitCents ?? null, maxRentalHours: terms.maxRentalHours ?? null, maxBurnCentsPerHour: null, expiresAt: null, idleTimeoutMinutes: null };
  return {
    id: ids.newId('tok'),
    tenantId,
    kind: 'link',
    name,
    scopes: fitted.scopes,
    spendLimitCents: fitted.spendLimitCents,
    committedCents: 0,
    maxRentalHours: fitted.maxRentalHours,
    maxBurnCentsPerHour: fitted.maxBurnCentsPerHour,
    expiresAt: fitted.expiresAt,
    parentId: parent?.id ?? null,
    ancestorIds: parent ? [...parent.ancestorIds, parent.id] : [],
    createdAt: now,
    revokedAt: null,
    secretDigest: NO_SECRET,
    idleTimeoutMinutes: fitted.idleTimeoutMinutes,
    idleDeadlineAt: null,
    idledAt: null,
    role: terms.role,
  };
}

const limitsOf = (terms: LinkTerms) => ({
  ...(terms.spendLimitCents != null ? { spendLimitCents: terms.spendLimitCents } : {}),
  ...(terms.maxRentalHours != null ? { maxRentalHours: terms.maxRentalHours } : {}),
});

/**
 * A node and its ancestors (nearest first), read locked after the tenant's account lock, or [] when any of them has
 * ended. Every change to a tenant's tree takes that lock first (the one every spend takes; end-subtree.ts and
 * narrow-subtree.ts take it before the tokens), so a node added under this chain (a token, a session, a person's
 * link) cannot be added while another transaction ends or narrows it: whichever comes second reads what the first left.
 * Read without it, a sign-in, an accepted invitation or a token issued in the moment of a removal or demotion hung a live
 * node under an ended or narrowed one, which outlived it.
 */
export async function lockLiveChain(uow: UnitOfWork, tenantId: string, nodeId: string, now: Date): Promise<Token[]> {
  await uow.accounts.lock(tenantId, now);
  const chain = await uow.tokens.chain(tenantId, nodeId, { lock: true });
  return chain.length > 0 && chain.every((node) => isActive(node, now)) ? chain : [];
}

/**
 * Where a person linked by `caller` hangs, and with what role: under the caller's own person when it is a session (a
 * second way in for the same person, with their role), under the token itself when it is a root API token (as an admin).
 * The caller is read again under the tree's lock (lockLiveChain), so one revoked, removed or demoted meanwhile links
 * nobody. Answers the parent's chain, nearest first.
 */
export async function linkParent(uow: UnitOfWork, caller: Token, now: Date): Promise<{ chain: Token[]; role: Role }> {
  const own = await lockLiveChain(uow, caller.tenantId, caller.id, now);
  const self = own[0];
  if (!self) throw new DomainError('UNAUTHENTICATED', 'the token or one that issued it was revoked or expired');
  if (!isRoot(self)) throw rootRequired('linking or inviting a person');
  const chain = own.slice(own.findIndex((node) => node.id === actingNodeId(self)));
  return { chain, role: self.kind === 'session' && self.role ? self.role : 'admin' };
}

/**
 * A credential that is not root acts only on what its own subtree made (docs/decisions.md, "One tree of authority"):
 * `madeBy` is the token that made the instance, volume, reservation or spot claim. Checked before anything about the
 * thing's state, so the answer tells nothing about another credential's things beyond that they are not the caller's.
 */
export async function requireMadeUnder(uow: UnitOfWork, caller: Token, madeBy: string | null, what: string): Promise<void> {
  if (isRoot(caller)) return;
  const maker = madeBy ? await uow.tokens.findById(madeBy) : null;
  if (maker && maker.tenantId === caller.tenantId && isUnder(maker, actingNodeId(caller))) return;
  throw new DomainError(
    'MADE_BY_ANOTHER',
    `${what} was made by another credential of this tenant; a credential that is not root acts only on what it or the tokens it issued made`,
  );
}
