import type { UnitOfWork } from '../ports/storage.ts';
import { announceRevoked, newTokenSecret, type TenancyContext } from './context.ts';
import type { IssuedToken } from './issue-token.ts';
import { SCOPES } from './scopes.ts';
import type { Token } from './token.ts';

/** A console session lasts 30 days (docs/decisions.md, "Sign-in"). */
export const SESSION_LIFETIME_MS = 30 * 24 * 3_600_000;

/** Who a session was issued to: the identity provider and the person's subject there. */
export interface SessionHolder {
  provider: string;
  subject: string;
}

/**
 * A person's console session (docs/decisions.md, "Sign-in"), inside the caller's transaction: a token of the tenant
 * with every scope and no cap, expiring SESSION_LIFETIME after issue; like a root token it administers the whole
 * tenant, and it is listed and revoked like any token (sign-out revokes itself). It is recorded as the identity's,
 * so that a password reset can end it (endSessionsOf).
 */
export async function issueSession(ctx: TenancyContext, uow: UnitOfWork, tenantId: string, identity: SessionHolder, now: Date): Promise<IssuedToken> {
  const secret = newTokenSecret(ctx);
  const token: Token = {
    ...secret.ids,
    tenantId,
    kind: 'session',
    name: 'console session',
    scopes: [...SCOPES],
    spendLimitCents: null,
    committedCents: 0,
    maxRentalHours: null,
    maxBurnCentsPerHour: null,
    expiresAt: new Date(now.getTime() + SESSION_LIFETIME_MS),
    parentId: null,
    ancestorIds: [],
    createdAt: now,
    revokedAt: null,
    idleTimeoutMinutes: null,
    idleDeadlineAt: null,
    idledAt: null,
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
    if (tenantId === undefined || session.tenantId === tenantId) ids.push(...(await uow.tokens.revokeSubtree(session.tenantId, session.tokenId, now)));
  }
  return ids;
}
