import type { Cents } from '../money.ts';
import { ROOT_ROLES, type Role } from './roles.ts';
import { SCOPES, type Scope } from './scopes.ts';

/**
 * `api`: issued by POST /v1/tokens (agents, scripts); `session`: a person's console session from a sign-in;
 * `link`: a person's place in the tenant (docs/decisions.md, "One tree of authority"), the parent of their sessions.
 * A link has no secret: nobody authenticates as one.
 */
export type TokenKind = 'api' | 'session' | 'link';

export interface Token {
  id: string;
  tenantId: string;
  kind: TokenKind;
  name: string | null;
  scopes: Scope[];
  /** The token's own cap on commitments; null = no cap of its own. */
  spendLimitCents: Cents | null;
  /** Commitments made through this token and every token it issued, directly or not. */
  committedCents: Cents;
  maxRentalHours: number | null;
  /** The most the live machines and volumes under this token (and its descendants) may cost an hour; null = none. */
  maxBurnCentsPerHour: Cents | null;
  expiresAt: Date | null;
  /** The token that issued this one; null for a tenant's root tokens. */
  parentId: string | null;
  /** Every ancestor, the root first; lets one statement find a subtree or a chain. */
  ancestorIds: string[];
  createdAt: Date;
  revokedAt: Date | null;
  secretDigest: string;
  /** The dead-man switch: minutes without activity after which the token and its subtree end; null = none. */
  idleTimeoutMinutes: number | null;
  /** Recorded activity plus the timeout (core/tenancy/token-activity.ts); null without a timeout. */
  idleDeadlineAt: Date | null;
  /** When the token ended for idleness (its deadline or an ancestor's), set with revokedAt; null otherwise. */
  idledAt: Date | null;
  /** The person's role, on a link and on each session under it; null on API tokens. */
  role: Role | null;
}

/** Whether the token has gone past its idle deadline: ended for it, or about to be by the next sweep. */
export const isIdle = (token: Token, now: Date): boolean =>
  token.idledAt !== null || (token.idleDeadlineAt !== null && token.idleDeadlineAt.getTime() <= now.getTime());

export const isActive = (token: Token, now: Date): boolean =>
  token.revokedAt === null && (token.expiresAt === null || token.expiresAt.getTime() > now.getTime()) && !isIdle(token, now);

/**
 * Whether a credential may still spend: active, and still holding rent. A person demoted (or a token narrowed under
 * them) rents nothing more, not even through a reservation or spot claim made before (docs/decisions.md, "One tree of
 * authority").
 */
export const mayRent = (token: Token, now: Date): boolean => isActive(token, now) && token.scopes.includes('rent');

/**
 * What may still be committed through a token: the smallest remaining cap along its chain
 * (the token and every ancestor), or null when no token in the chain carries a cap.
 * `chain` holds the token and its ancestors, in any order.
 */
export const remainingCents = (chain: readonly Token[]): Cents | null => {
  let remaining: Cents | null = null;
  for (const link of chain) {
    if (link.spendLimitCents === null) continue;
    const left = Math.max(0, link.spendLimitCents - link.committedCents);
    remaining = remaining === null ? left : Math.min(remaining, left);
  }
  return remaining;
};

/** The tightest rental-hours limit along a chain, or null when none carries one. */
export const maxRentalHours = (chain: readonly Token[]): number | null =>
  chain.reduce<number | null>(
    (tightest, link) =>
      link.maxRentalHours === null ? tightest : tightest === null ? link.maxRentalHours : Math.min(tightest, link.maxRentalHours),
    null,
  );

/** The tightest burn ceiling along a chain, or null when none carries one. */
export const maxBurnCentsPerHour = (chain: readonly Token[]): Cents | null =>
  chain.reduce<Cents | null>((tightest, link) => (link.maxBurnCentsPerHour === null ? tightest : Math.min(tightest ?? link.maxBurnCentsPerHour, link.maxBurnCentsPerHour)), null);

/**
 * Root (docs/decisions.md, "One tree of authority"): a session of an owner or an admin, or an API token with every
 * scope and no limit of any kind. A token's limits are inherited by every token it issues (token-terms.ts), so a token
 * with none on its own row has none above it either.
 */
export const isRoot = (token: Token): boolean => {
  if (token.kind === 'session') return token.role !== null && ROOT_ROLES.includes(token.role);
  if (token.kind !== 'api') return false;
  return (
    SCOPES.every((scope) => token.scopes.includes(scope)) &&
    token.spendLimitCents === null &&
    token.maxRentalHours === null &&
    token.maxBurnCentsPerHour === null &&
    token.expiresAt === null &&
    token.idleTimeoutMinutes === null
  );
};

/**
 * The node a credential acts for: a session acts for its person (their link), so what one session of a person made,
 * another of theirs may end; any other credential acts for itself.
 */
export const actingNodeId = (token: Token): string => (token.kind === 'session' && token.parentId !== null ? token.parentId : token.id);

/** Whether `node` (a token's id and ancestors) is `actor` or lies under it. */
export const isUnder = (node: Pick<Token, 'id' | 'ancestorIds'>, actorId: string): boolean => node.id === actorId || node.ancestorIds.includes(actorId);

/** Whether `caller` may see and revoke `target`: root any token of its tenant, any other what lies under the node it acts for. */
export const administers = (caller: Token, target: Token): boolean =>
  caller.tenantId === target.tenantId && target.kind !== 'link' && (isRoot(caller) || caller.id === target.id || isUnder(target, actingNodeId(caller)));
