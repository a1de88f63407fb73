import type { MarketSummary } from '../market/summary.ts';
import type { BootstrapSecret, Tenant } from '../tenancy/tenant.ts';
import type { Token } from '../tenancy/token.ts';

/**
 * Persistence, shaped around the use cases. A unit of work is one database transaction:
 * everything done through it commits together or not at all. Locks live here, not in the core.
 */
export interface Storage {
  /** Runs `work` in one transaction; it commits when `work` resolves and rolls back when it throws. */
  transaction<T>(work: (uow: UnitOfWork) => Promise<T>): Promise<T>;
  /** Runs read-only `work` outside any transaction. */
  read<T>(work: (uow: UnitOfWork) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface UnitOfWork {
  tenants: TenantStore;
  tokens: TokenStore;
  marketSummary: MarketSummaryStore;
}

export interface TenantStore {
  add(tenant: Tenant, bootstrap: BootstrapSecret): Promise<void>;
  get(tenantId: string): Promise<Tenant | null>;
  /** The tenant's bootstrap secret, locked until the transaction ends so only one caller can use it. */
  lockBootstrap(tenantId: string): Promise<BootstrapSecret | null>;
  markBootstrapUsed(tenantId: string, at: Date): Promise<void>;
}

export interface TokenStore {
  add(token: Token): Promise<void>;
  /** Any tenant's token by id: authentication looks a token up before it knows the tenant. */
  findById(tokenId: string): Promise<Token | null>;
  /**
   * The token followed by its ancestors, nearest first; empty when the token is not the tenant's.
   * With `lock`, the rows stay locked (in a fixed order) until the transaction ends.
   */
  chain(tenantId: string, tokenId: string, options?: { lock?: boolean }): Promise<Token[]>;
  /** The tenant's tokens, oldest first; with `under`, only that token and its descendants. */
  list(tenantId: string, options?: { under?: string }): Promise<Token[]>;
  /** Revokes the token and every descendant not yet revoked; returns the ids it revoked. */
  revokeSubtree(tenantId: string, tokenId: string, at: Date): Promise<string[]>;
}

export interface StoredMarketSummary {
  summary: MarketSummary;
  builtAt: Date;
}

/** The one market summary every replica serves, and the lease that lets one replica at a time rebuild it. */
export interface MarketSummaryStore {
  /** The last summary built from a refresh in which some market answered; null before the first. */
  latest(): Promise<StoredMarketSummary | null>;
  /**
   * Claims the next refresh: succeeds only when no refresh started after `lastStartedBefore` and no
   * claimed refresh is still running (its lease ends after `now`). The claim lasts until `leaseUntil`.
   */
  claimRefresh(now: Date, lastStartedBefore: Date, leaseUntil: Date): Promise<boolean>;
  /** Stores a new summary and ends the lease. */
  completeRefresh(summary: MarketSummary, builtAt: Date): Promise<void>;
  /** Ends the lease of a refresh in which no market answered; the last good summary stays. */
  failRefresh(error: string): Promise<void>;
  /** Whether another refresh holds the lease at `now`. */
  refreshRunning(now: Date): Promise<boolean>;
}
