import { DomainError } from '../errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { Ids, Secrets } from '../ports/ids.ts';
import type { RevocationFeed } from '../ports/revocations.ts';
import type { Storage } from '../ports/storage.ts';
import type { Token } from './token.ts';
import type { ActivityWrites } from './activity-writes.ts';
import type { TokenCache } from './token-cache.ts';

export const TOKEN_SECRET_PREFIX = 'gcp';
export const BOOTSTRAP_SECRET_PREFIX = 'gcpboot';

/** What the tenancy use cases work with: our records, the clock, ids and secrets, and this replica's cache of token rows. */
export interface TenancyContext {
  storage: Storage;
  clock: Clock;
  ids: Ids;
  secrets: Secrets;
  /** Token rows authenticated lately (core/tenancy/token-cache.ts). */
  recent: TokenCache;
  /** When this replica last wrote each token's activity (core/tenancy/token-activity.ts). */
  activity: ActivityWrites;
  /** Shared by the replicas: a revocation anywhere empties every replica's cache of it; null with one replica. */
  revocations: RevocationFeed | null;
}

export const unauthenticated = () =>
  new DomainError('UNAUTHENTICATED', 'missing, invalid, expired or revoked token; send Authorization: Bearer <token>');

/** A fresh token id and bearer secret "<prefix>_<token id>_<random>", and the digest stored in its place. */
export function newTokenSecret(ctx: TenancyContext): { ids: Pick<Token, 'id' | 'secretDigest'>; bearer: string } {
  const id = ctx.ids.newId('tok');
  const bearer = `${TOKEN_SECRET_PREFIX}_${id}_${ctx.secrets.newSecret('')}`;
  return { ids: { id, secretDigest: ctx.secrets.digest(bearer) }, bearer };
}

/**
 * After a commit that revoked tokens: this replica's cache and every other replica's forget them at once (forgotten
 * before the commit, a concurrent request could cache the row as it was).
 */
export async function announceRevoked(ctx: TenancyContext, tokenIds: readonly string[]): Promise<void> {
  ctx.recent.forget(tokenIds);
  if (tokenIds.length > 0) await ctx.revocations?.publish(tokenIds);
}
