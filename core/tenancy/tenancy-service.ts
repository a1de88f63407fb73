import type { Cents } from '../money.ts';
import type { Clock } from '../ports/clock.ts';
import type { Ids, Secrets } from '../ports/ids.ts';
import type { RevocationFeed } from '../ports/revocations.ts';
import type { Storage, UnitOfWork } from '../ports/storage.ts';
import { authenticate } from './authenticate.ts';
import { announceRevoked, type TenancyContext } from './context.ts';
import { createTenant, provisionTenant } from './create-tenant.ts';
import { issueToken, type IssuedToken, type IssuingCredential } from './issue-token.ts';
import { revokeToken } from './revoke-token.ts';
import { endSessionsIn, endSessionsOf, issueSession, type SessionHolder } from './sessions.ts';
import type { Tenant } from './tenant.ts';
import { actingNodeId, isRoot, maxRentalHours, remainingCents, type Token } from './token.ts';
import { ActivityWrites } from './activity-writes.ts';
import { TokenCache } from './token-cache.ts';
import { managesTenant, tenantManageRequired } from './tenant-manage.ts';
import type { TokenRequest } from './token-terms.ts';

export interface TokenView {
  token: Token;
  /** The smallest remaining cap along the token's chain; null when uncapped. */
  remainingCents: Cents | null;
  /** The tightest max_rental_hours along the chain. */
  effectiveMaxRentalHours: number | null;
  /** What the live machines and volumes under the token (and its descendants) cost an hour. */
  burnCentsPerHour: Cents;
  /** What may still be added an hour: the least any burn ceiling along the chain leaves; null without one. */
  burnLeftCentsPerHour: Cents | null;
  /** Whether it manages the tenant as a whole (tenant-manage.ts): manage, and no member's session nor under one. */
  managesTenant: boolean;
}

/** A token as listed, with what burns under it now. */
export interface ListedToken {
  token: Token;
  burnCentsPerHour: Cents;
}

/**
 * Tenants and their tokens (docs/decisions.md, "Tokens and tenants"): bootstrap secrets, API tokens in chains under
 * caps, console sessions, authentication through this replica's cache of token rows, revocation heard by every
 * replica. Each command is a file of core/tenancy; this object holds the cache, hands them what they work with, and
 * answers the plain reads itself.
 */
export class TenancyService {
  private readonly context: TenancyContext;

  /**
   * `tokenCacheMs`: how long an authenticated token row is reused (default 5 s; 0 reads it every time).
   * `revocations`: shared by the replicas, so a revocation anywhere empties every replica's cache of it at once.
   */
  constructor(deps: { storage: Storage; clock: Clock; ids: Ids; secrets: Secrets; tokenCacheMs?: number; revocations?: RevocationFeed }) {
    const recent = new TokenCache(deps.clock, deps.tokenCacheMs ?? 5_000);
    this.context = { storage: deps.storage, clock: deps.clock, ids: deps.ids, secrets: deps.secrets, recent, activity: new ActivityWrites(), revocations: deps.revocations ?? null };
    this.context.revocations?.subscribe((tokenIds) => (tokenIds === null ? recent.clear() : recent.forget(tokenIds)));
  }

  createTenant(name: string): Promise<{ tenant: Tenant; bootstrapSecret: string; bootstrapExpiresAt: Date }> {
    return createTenant(this.context, name);
  }

  authenticate(bearer: string): Promise<Token> {
    return authenticate(this.context, bearer);
  }

  issueToken(credential: IssuingCredential, request: TokenRequest): Promise<IssuedToken> {
    return issueToken(this.context, credential, request);
  }

  issueSession(uow: UnitOfWork, link: { tenantId: string; nodeId: string }, identity: SessionHolder, now: Date): Promise<IssuedToken> {
    return issueSession(this.context, uow, link, identity, now);
  }

  endSessionsOf(identity: SessionHolder): Promise<string[]> {
    return endSessionsOf(this.context, identity);
  }

  endSessionsIn(uow: UnitOfWork, identity: SessionHolder, now: Date, tenantId?: string): Promise<string[]> {
    return endSessionsIn(uow, identity, now, tenantId);
  }

  announceRevoked(tokenIds: readonly string[]): Promise<void> {
    return announceRevoked(this.context, tokenIds);
  }

  provisionTenant(uow: UnitOfWork, name: string, now: Date): Promise<Tenant> {
    return provisionTenant(this.context, uow, name, now);
  }

  async describe(caller: Token): Promise<TokenView> {
    const { chain, burning } = await this.context.storage.read(async (uow) => {
      const chain = await uow.tokens.chain(caller.tenantId, caller.id);
      return { chain, burning: await uow.tokens.burnCentsPerHour(caller.tenantId, chain.map((link) => link.id)) };
    });
    const left = chain.flatMap((link) => (link.maxBurnCentsPerHour === null ? [] : [Math.max(0, link.maxBurnCentsPerHour - (burning.get(link.id) ?? 0))]));
    return {
      token: chain[0] ?? caller,
      remainingCents: remainingCents(chain),
      effectiveMaxRentalHours: maxRentalHours(chain),
      burnCentsPerHour: burning.get(caller.id) ?? 0,
      burnLeftCentsPerHour: left.length === 0 ? null : Math.min(...left),
      managesTenant: managesTenant(chain),
    };
  }

  /**
   * Refuses a credential without manage over the whole tenant (tenant-manage.ts): a member's session at once, an API
   * token after reading its chain for the nearest person above it. Root reads nothing.
   */
  async requireTenantManage(caller: Token, what: string): Promise<void> {
    if (isRoot(caller)) return;
    const chain = caller.kind === 'api' ? await this.context.storage.read((uow) => uow.tokens.chain(caller.tenantId, caller.id)) : [caller];
    if (!managesTenant(chain)) throw tenantManageRequired(what);
  }

  /** The tokens the caller administers: root sees the whole tenant, any other the subtree of the node it acts for. */
  listTokens(caller: Token): Promise<ListedToken[]> {
    return this.context.storage.read(async (uow) => {
      const tokens = (await uow.tokens.list(caller.tenantId, isRoot(caller) ? {} : { under: actingNodeId(caller) })).filter((token) => token.kind !== 'link');
      const burning = await uow.tokens.burnCentsPerHour(caller.tenantId, tokens.map((token) => token.id));
      return tokens.map((token) => ({ token, burnCentsPerHour: burning.get(token.id) ?? 0 }));
    });
  }

  revokeToken(caller: Token, tokenId: string): Promise<void> {
    return revokeToken(this.context, caller, tokenId);
  }
}
