import type { Cents } from '../money.ts';
import type { Role } from '../tenancy/roles.ts';
import type { Scope } from '../tenancy/scopes.ts';
import type { BootstrapSecret, Tenant } from '../tenancy/tenant.ts';
import type { Token } from '../tenancy/token.ts';

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
  /**
   * The chains of these tokens (of any tenant) in one read: each token followed by its ancestors, nearest first, by
   * token id; a token that does not exist has none.
   */
  chains(tokenIds: readonly string[]): Promise<Map<string, Token[]>>;
  /** The tenant's tokens, oldest first; with `under`, only that token and its descendants. */
  list(tenantId: string, options?: { under?: string }): Promise<Token[]>;
  /** Adds (or, negative, releases) a commitment on the token and every ancestor that issued it. */
  addCommitment(tokenId: string, cents: number): Promise<void>;
  /**
   * What burns under each of these tokens (itself and every descendant), in cents an hour: the rates of the
   * machines whose billing has not ended plus the storage rates of the volumes not deleted or failed.
   */
  burnCentsPerHour(tenantId: string, tokenIds: readonly string[]): Promise<Map<string, Cents>>;
  /** Revokes the token and every descendant not yet revoked; returns the ids it revoked. */
  revokeSubtree(tenantId: string, tokenId: string, at: Date): Promise<string[]>;
  /**
   * Activity at `now` of these tokens (one and its ancestors): each live one with an idle timeout whose deadline
   * would move by `coalesceMs` or more gets `now` plus its timeout; one past its deadline is left there. Answers
   * the first token's deadline after it.
   */
  recordActivity(tokenIds: readonly string[], now: Date, coalesceMs: number): Promise<Date | null>;
  /** Tokens of any tenant past their idle deadline at `now`, not revoked nor ended yet, earliest deadline first. */
  idleCandidates(now: Date, limit: number): Promise<Token[]>;
  /** The token and every descendant (revoked ones too), locked in id order until the transaction ends. */
  lockSubtree(tenantId: string, tokenId: string): Promise<Token[]>;
  /**
   * Moves a node with its subtree to hang from the tenant itself (an owner's link: narrow-subtree.ts); the ancestors it
   * leaves keep the commitments it made under them.
   */
  moveToTop(tenantId: string, nodeId: string): Promise<void>;
  /** Gives a node of the tree of authority new terms (a person's role changed: narrow-subtree.ts). */
  reshape(tokenId: string, terms: { scopes: Scope[]; role: Role | null; spendLimitCents: Cents | null; maxRentalHours: number | null }): Promise<void>;
  /** Ends these tokens for idleness at `at` (revoked then, idled_at set), those not revoked yet; returns their ids. */
  markIdle(tenantId: string, tokenIds: readonly string[], at: Date): Promise<string[]>;
}
