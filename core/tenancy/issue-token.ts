import { DomainError } from '../errors.ts';
import { newTokenSecret, unauthenticated, type TenancyContext } from './context.ts';
import { lockLiveChain } from './authority.ts';
import type { Token } from './token.ts';
import { childTokenTerms, rootTokenTerms, type TokenRequest, type TokenTerms } from './token-terms.ts';

/** How a caller proves it may issue a token. */
export type IssuingCredential =
  | { kind: 'token'; token: Token }
  | { kind: 'bootstrap'; tenantId: string; secret: string };

export interface IssuedToken {
  token: Token;
  /** The bearer secret, shown once. */
  secret: string;
}

/**
 * Issues an API token: a root token with the tenant's bootstrap secret (used once), or a child of a token with manage,
 * whose terms stay within the chain's (token-terms.ts).
 */
export async function issueToken(ctx: TenancyContext, credential: IssuingCredential, request: TokenRequest): Promise<IssuedToken> {
  return ctx.storage.transaction(async (uow) => {
    const now = ctx.clock.now();
    let tenantId: string;
    let terms: TokenTerms;
    let ancestry: string[];
    if (credential.kind === 'bootstrap') {
      const bootstrap = await uow.tenants.lockBootstrap(credential.tenantId);
      const valid =
        bootstrap !== null &&
        ctx.secrets.sameDigest(bootstrap.digest, ctx.secrets.digest(credential.secret)) &&
        bootstrap.usedAt === null &&
        bootstrap.expiresAt.getTime() > now.getTime();
      if (!valid) {
        throw new DomainError(
          'BOOTSTRAP_SECRET_INVALID',
          'bootstrap secret missing, wrong, expired or already used; it is single-use and valid 24 hours',
        );
      }
      terms = rootTokenTerms(request, now);
      await uow.tenants.markBootstrapUsed(credential.tenantId, now);
      tenantId = credential.tenantId;
      ancestry = [];
    } else {
      const issuer = credential.token;
      if (!issuer.scopes.includes('manage')) {
        throw new DomainError('SCOPE_REQUIRED', 'issuing tokens needs the manage scope');
      }
      // Locked so that two children minted at once both see the same remaining cap, and under the tree's lock so that
      // none is minted under a token being revoked or narrowed meanwhile (lockLiveChain)
      const chain = await lockLiveChain(uow, issuer.tenantId, issuer.id, now);
      if (chain.length === 0) throw unauthenticated();
      terms = childTokenTerms(chain, request, now);
      tenantId = issuer.tenantId;
      ancestry = [...issuer.ancestorIds, issuer.id];
    }
    const secret = newTokenSecret(ctx);
    const token: Token = {
      ...secret.ids,
      tenantId,
      kind: 'api',
      ...terms,
      committedCents: 0,
      parentId: ancestry.at(-1) ?? null,
      ancestorIds: ancestry,
      createdAt: now,
      revokedAt: null,
      idleDeadlineAt: terms.idleTimeoutMinutes === null ? null : new Date(now.getTime() + terms.idleTimeoutMinutes * 60_000),
      idledAt: null,
      role: null,
    };
    await uow.tokens.add(token);
    return { token, secret: secret.bearer };
  });
}
