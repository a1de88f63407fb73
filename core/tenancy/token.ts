import type { Cents } from '../money.ts';
import type { Scope } from './scopes.ts';

/** `api`: issued by POST /v1/tokens (agents, scripts); `session`: a person's console session from a sign-in. */
export type TokenKind = 'api' | 'session';

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
}

/** Whether the token has gone past its idle deadline: ended for it, or about to be by the next sweep. */
export const isIdle = (token: Token, now: Date): boolean =>
  token.idledAt !== null || (token.idleDeadlineAt !== null && token.idleDeadlineAt.getTime() <= now.getTime());

export const isActive = (token: Token, now: Date): boolean =>
  token.revokedAt === null && (token.expiresAt === null || token.expiresAt.getTime() > now.getTime()) && !isIdle(token, now);

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

/** Whether `caller` may see and revoke `target`: itself, anything it issued, or anything at all for a root token. */
export const administers = (caller: Token, target: Token): boolean =>
  caller.tenantId === target.tenantId &&
  (caller.parentId === null || caller.id === target.id || target.ancestorIds.includes(caller.id));

/**
 * Whether a token may link a person into its tenant (docs/decisions.md, "Linking people"): a console session
 * (a person already in the tenant), or a root credential, meaning `manage` and no cap, no max_rental_hours, no
 * burn ceiling and no expiry on the token or on any ancestor. A person linked in gets sessions with every scope and no cap, so
 * only a credential that could already do everything may bring one in; an agent's limited token never can.
 * `chain` holds the token first, then its ancestors.
 */
export const linksPeople = (chain: readonly Token[]): boolean => {
  const token = chain[0];
  if (!token) return false;
  if (token.kind === 'session') return true;
  return token.scopes.includes('manage') && chain.every((link) => link.spendLimitCents === null && link.maxRentalHours === null && link.maxBurnCentsPerHour === null && link.expiresAt === null);
};
