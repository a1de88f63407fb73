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
