import { DomainError, invalidInput, notFound } from '../errors.ts';
import type { Cents } from '../money.ts';
import type { Clock } from '../ports/clock.ts';
import type { Ids, Secrets } from '../ports/ids.ts';
import type { Storage, UnitOfWork } from '../ports/storage.ts';
import { SCOPES } from './scopes.ts';
import { BOOTSTRAP_SECRET_LIFETIME_MS, type Tenant } from './tenant.ts';
import { administers, isActive, maxRentalHours, remainingCents, type Token } from './token.ts';
import { childTokenTerms, rootTokenTerms, type TokenRequest, type TokenTerms } from './token-terms.ts';
import { TokenCache } from './token-cache.ts';
import type { RevocationFeed } from '../ports/revocations.ts';

export const TOKEN_SECRET_PREFIX = 'gcp';
const BOOTSTRAP_SECRET_PREFIX = 'gcpboot';
/** A console session lasts 30 days (SPEC.md Limits). */
export const SESSION_LIFETIME_MS = 30 * 24 * 3_600_000;

/** How a caller proves it may issue a token. */
export type IssuingCredential =
  | { kind: 'token'; token: Token }
  | { kind: 'bootstrap'; tenantId: string; secret: string };

export interface IssuedToken {
  token: Token;
  /** The bearer secret, shown once. */
  secret: string;
}

export interface TokenView {
  token: Token;
  /** The smallest remaining cap along the token's chain; null when uncapped. */
  remainingCents: Cents | null;
  /** The tightest max_rental_hours along the chain. */
  effectiveMaxRentalHours: number | null;
}

const unauthenticated = () =>
  new DomainError('UNAUTHENTICATED', 'missing, invalid, expired or revoked token; send Authorization: Bearer <token>');

/**
 * A bearer secret is "<prefix>_<token id>_<random>": the id part lets authentication load one row,
 * whose stored digest is then compared in constant time.
 */
const tokenIdOf = (bearer: string): string | null => {
  const match = /^gcp_(tok_[a-z0-9]+)_[A-Za-z0-9_-]{20,}$/.exec(bearer);
  return match?.[1] ?? null;
};

export class TenancyService {
  private readonly storage: Storage;
  private readonly clock: Clock;
  private readonly ids: Ids;
  private readonly secrets: Secrets;
  private readonly recent: TokenCache;
  private readonly revocations: RevocationFeed | null;

  /**
   * `tokenCacheMs`: how long an authenticated token row is reused (default 5 s; 0 reads it every time).
   * `revocations`: shared by the replicas, so a revocation anywhere empties every replica's cache of it at once.
   */
  constructor(deps: { storage: Storage; clock: Clock; ids: Ids; secrets: Secrets; tokenCacheMs?: number; revocations?: RevocationFeed }) {
    this.storage = deps.storage;
    this.clock = deps.clock;
    this.ids = deps.ids;
    this.secrets = deps.secrets;
    this.recent = new TokenCache(deps.clock, deps.tokenCacheMs ?? 5_000);
    this.revocations = deps.revocations ?? null;
    this.revocations?.subscribe((tokenIds) => (tokenIds === null ? this.recent.clear() : this.recent.forget(tokenIds)));
  }

  async createTenant(name: string): Promise<{ tenant: Tenant; bootstrapSecret: string; bootstrapExpiresAt: Date }> {
    const trimmed = name.trim();
    if (trimmed.length === 0) throw invalidInput(['body', 'name'], 'must not be blank');
    const now = this.clock.now();
    const tenant: Tenant = { id: this.ids.newId('ten'), name: trimmed, createdAt: now };
    const bootstrapSecret = this.secrets.newSecret(BOOTSTRAP_SECRET_PREFIX);
    const bootstrapExpiresAt = new Date(now.getTime() + BOOTSTRAP_SECRET_LIFETIME_MS);
    await this.storage.transaction((uow) =>
      uow.tenants.add(tenant, {
        tenantId: tenant.id,
        digest: this.secrets.digest(bootstrapSecret),
        expiresAt: bootstrapExpiresAt,
        usedAt: null,
      }),
    );
    return { tenant, bootstrapSecret, bootstrapExpiresAt };
  }

  /** The active token behind a bearer secret, or UNAUTHENTICATED. */
  async authenticate(bearer: string): Promise<Token> {
    const tokenId = tokenIdOf(bearer);
    if (!tokenId) throw unauthenticated();
    let token = this.recent.get(tokenId);
    if (!token) {
      token = await this.storage.read((uow) => uow.tokens.findById(tokenId));
      if (token) this.recent.put(token);
    }
    const digest = this.secrets.digest(bearer);
    if (!token || !this.secrets.sameDigest(token.secretDigest, digest) || !isActive(token, this.clock.now())) {
      throw unauthenticated();
    }
    return token;
  }

  async issueToken(credential: IssuingCredential, request: TokenRequest): Promise<IssuedToken> {
    return this.storage.transaction(async (uow) => {
      const now = this.clock.now();
      let tenantId: string;
      let terms: TokenTerms;
      let ancestry: string[];
      if (credential.kind === 'bootstrap') {
        const bootstrap = await uow.tenants.lockBootstrap(credential.tenantId);
        const valid =
          bootstrap !== null &&
          this.secrets.sameDigest(bootstrap.digest, this.secrets.digest(credential.secret)) &&
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
        // Locked so that two children minted at once both see the same remaining cap.
        const chain = await uow.tokens.chain(issuer.tenantId, issuer.id, { lock: true });
        if (chain.length === 0 || !isActive(chain[0]!, now)) throw unauthenticated();
        terms = childTokenTerms(chain, request, now);
        tenantId = issuer.tenantId;
        ancestry = [...issuer.ancestorIds, issuer.id];
      }
      const secret = this.newTokenSecret();
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
      };
      await uow.tokens.add(token);
      return { token, secret: secret.bearer };
    });
  }

  /**
   * A person's console session (DESIGN.md §11), inside the caller's transaction: a token of the tenant with
   * every scope and no cap, expiring SESSION_LIFETIME after issue; like a root token it administers the
   * whole tenant, and it is listed and revoked like any token (sign-out revokes itself). It is recorded as
   * the identity's, so that a password reset can end it (endSessionsOf).
   */
  async issueSession(uow: UnitOfWork, tenantId: string, identity: { provider: string; subject: string }, now: Date): Promise<IssuedToken> {
    const secret = this.newTokenSecret();
    const token: Token = {
      ...secret.ids,
      tenantId,
      kind: 'session',
      name: 'console session',
      scopes: [...SCOPES],
      spendLimitCents: null,
      committedCents: 0,
      maxRentalHours: null,
      expiresAt: new Date(now.getTime() + SESSION_LIFETIME_MS),
      parentId: null,
      ancestorIds: [],
      createdAt: now,
      revokedAt: null,
    };
    await uow.tokens.add(token);
    await uow.identities.recordSession(token.id, identity.provider, identity.subject);
    return { token, secret: secret.bearer };
  }

  /**
   * Ends every live console session issued to the identity, in every tenant, as a sign-out of each would:
   * with everything the session issued (revokeSubtree), so a stolen session cannot outlive a password reset
   * through an API token it minted. Tokens not descended from one of these sessions stay valid.
   * Answers the ids revoked.
   */
  async endSessionsOf(identity: { provider: string; subject: string }): Promise<string[]> {
    const revoked = await this.storage.transaction((uow) => this.endSessionsIn(uow, identity, this.clock.now()));
    await this.announceRevoked(revoked);
    return revoked;
  }

  /**
   * endSessionsOf inside the caller's transaction, of one tenant's sessions only when `tenantId` is given.
   * Answers the ids revoked: hand them to announceRevoked once the transaction committed.
   */
  async endSessionsIn(uow: UnitOfWork, identity: { provider: string; subject: string }, now: Date, tenantId?: string): Promise<string[]> {
    const sessions = await uow.identities.liveSessions(identity.provider, identity.subject, now);
    const ids: string[] = [];
    for (const session of sessions) {
      if (tenantId === undefined || session.tenantId === tenantId) ids.push(...(await uow.tokens.revokeSubtree(session.tenantId, session.tokenId, now)));
    }
    return ids;
  }

  /** After a commit that revoked tokens: this replica's cache and every other replica's forget them at once. */
  async announceRevoked(tokenIds: readonly string[]): Promise<void> {
    this.recent.forget(tokenIds);
    if (tokenIds.length > 0) await this.revocations?.publish(tokenIds);
  }

  /**
   * A tenant made for a person who signed in for the first time, inside the caller's transaction. It
   * needs no bootstrap secret (the sign-in is the credential), so its secret is stored as already used.
   */
  async provisionTenant(uow: UnitOfWork, name: string, now: Date): Promise<Tenant> {
    const tenant: Tenant = { id: this.ids.newId('ten'), name: name.trim() || 'tenant', createdAt: now };
    await uow.tenants.add(tenant, { tenantId: tenant.id, digest: this.secrets.digest(this.secrets.newSecret(BOOTSTRAP_SECRET_PREFIX)), expiresAt: now, usedAt: now });
    return tenant;
  }

  async describe(caller: Token): Promise<TokenView> {
    const chain = await this.storage.read((uow) => uow.tokens.chain(caller.tenantId, caller.id));
    return { token: chain[0] ?? caller, remainingCents: remainingCents(chain), effectiveMaxRentalHours: maxRentalHours(chain) };
  }

  /** The tokens the caller administers: a root token sees the whole tenant, any other its own subtree. */
  async listTokens(caller: Token): Promise<Token[]> {
    return this.storage.read((uow) =>
      uow.tokens.list(caller.tenantId, caller.parentId === null ? {} : { under: caller.id }),
    );
  }

  /** Revokes a token and everything it issued. A token may always revoke itself; others need manage. */
  async revokeToken(caller: Token, tokenId: string): Promise<void> {
    if (tokenId !== caller.id && !caller.scopes.includes('manage')) {
      throw new DomainError('SCOPE_REQUIRED', 'revoking another token needs the manage scope');
    }
    const revoked = await this.storage.transaction(async (uow) => {
      const [target] = await uow.tokens.chain(caller.tenantId, tokenId);
      if (!target || !administers(caller, target)) throw notFound(`token ${tokenId}`);
      return uow.tokens.revokeSubtree(caller.tenantId, tokenId, this.clock.now());
    });
    // after the commit: forgotten earlier, a concurrent request could cache the row as it was
    this.recent.forget(revoked);
    if (revoked.length > 0) await this.revocations?.publish(revoked);
  }

  private newTokenSecret(): { ids: Pick<Token, 'id' | 'secretDigest'>; bearer: string } {
    const id = this.ids.newId('tok');
    const bearer = `${TOKEN_SECRET_PREFIX}_${id}_${this.secrets.newSecret('')}`;
    return { ids: { id, secretDigest: this.secrets.digest(bearer) }, bearer };
  }
}
