import { endSubtree } from '../bookings/end-subtree.ts';
import { notFound } from '../errors.ts';
import type { UnitOfWork } from '../ports/storage.ts';
import { lockLiveChain } from './authority.ts';
import { announceRevoked, newTokenSecret, type TenancyContext } from './context.ts';
import type { IssuedToken } from './issue-token.ts';
import type { Token } from './token.ts';

/** A console session lasts 30 days (docs/decisions.md, "Sign-in"). */
export const SESSION_LIFETIME_MS = 30 * 24 * 3_600_000;

/** Who a session was issued to: the identity provider and the person's subject there. */
export interface SessionHolder {
  provider: string;
  subject: string;
}

/**
 * A person's console session (docs/decisions.md, "Sign-in" and "One tree of authority"), inside the caller's
 * transaction: a token under the person's link node with exactly the role's scopes (the link's limits apply to it and
 * to every token it issues through the chain), expiring SESSION_LIFETIME after issue; listed and revoked like any
 * token (sign-out revokes itself). It is recorded as the identity's, so that a password reset can end it
 * (endSessionsOf).
 */
export async function issueSession(ctx: TenancyContext, uow: UnitOfWork, link: { tenantId: string; nodeId: string }, identity: SessionHolder, now: Date): Promise<IssuedToken> {
  // read again under the tree's lock: a person removed while they sign in or switch gets no session under their ended link
  const node = (await lockLiveChain(uow, link.tenantId, link.nodeId, now))[0];
  if (!node) throw notFound(`a person of tenant ${link.tenantId} with this identity (they were removed)`);
  if (node.kind !== 'link') throw new Error(`no link node ${link.nodeId} in tenant ${link.tenantId}`);
  const secret = newTokenSecret(ctx);
  const lifetimeEnd = new Date(now.getTime() + SESSION_LIFETIME_MS);
  const token: Token = {
    ...secret.ids,
    tenantId: link.tenantId,
    kind: 'session',
    name: 'console session',
    scopes: [...node.scopes],
    spendLimitCents: null,
    committedCents: 0,
    maxRentalHours: null,
    maxBurnCentsPerHour: null,
    expiresAt: node.expiresAt !== null && node.expiresAt < lifetimeEnd ? node.expiresAt : lifetimeEnd,
    parentId: node.id,
    ancestorIds: [...node.ancestorIds, node.id],
    createdAt: now,
    revokedAt: null,
    idleTimeoutMinutes: null,
    idleDeadlineAt: null,
    idledAt: null,
    role: node.role,
  };
  await uow.tokens.add(token);
  await uow.identities.recordSession(token.id, identity.provider, identity.subject);
  return { token, secret: secret.bearer };
}

/**
 * Ends every live console session issued to the identity, in every tenant, as a sign-out of each would: with
 * everything the session issued (revokeSubtree), so a stolen session cannot outlive a password reset through an API
 * token it minted. Tokens not descended from one of these sessions stay valid. Answers the ids revoked.
 */
export async function endSessionsOf(ctx: TenancyContext, identity: SessionHolder): Promise<string[]> {
  const revoked = await ctx.storage.transaction((uow) => endSessionsIn(uow, identity, ctx.clock.now()));
  await announceRevoked(ctx, revoked);
  return revoked;
}

/**
 * endSessionsOf inside the caller's transaction, of one tenant's sessions only when `tenantId` is given.
 * Answers the ids revoked: hand them to announceRevoked once the transaction committed.
 */
export async function endSessionsIn(uow: UnitOfWork, identity: SessionHolder, now: Date, tenantId?: string): Promise<string[]> {
  const sessions = await uow.identities.liveSessions(identity.provider, identity.subject, now);
  const ids: string[] = [];
  for (const session of sessions) {
    if (tenantId === undefined || session.tenantId === tenantId) ids.push(...(await endSubtree(uow, session.tenantId, session.tokenId, now)));
  }
  return ids;
}
