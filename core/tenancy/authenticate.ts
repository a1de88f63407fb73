import { unauthenticated, type TenancyContext } from './context.ts';
import { isActive, isIdle, type Token } from './token.ts';
import { recordActivity, timedOutIdle } from './token-activity.ts';

/**
 * A bearer secret is "<prefix>_<token id>_<random>": the id part lets authentication load one row,
 * whose stored digest is then compared in constant time.
 */
const tokenIdOf = (bearer: string): string | null => {
  const match = /^gcp_(tok_[a-z0-9]+)_[A-Za-z0-9_-]{20,}$/.exec(bearer);
  return match?.[1] ?? null;
};

const load = async (ctx: TenancyContext, tokenId: string): Promise<Token | null> => {
  const token = await ctx.storage.read((uow) => uow.tokens.findById(tokenId));
  if (token) ctx.recent.put(token);
  return token;
};

/**
 * The active token behind a bearer secret, or UNAUTHENTICATED (saying so when it timed out idle). The row may come
 * from this replica's cache (not while the revocation feed is down); a cached row that looks past its idle deadline is read again before the refusal, as
 * another replica may have recorded activity since. The request counts as the token's activity (token-activity.ts).
 */
export async function authenticate(ctx: TenancyContext, bearer: string): Promise<Token> {
  const tokenId = tokenIdOf(bearer);
  if (!tokenId) throw unauthenticated();
  const now = ctx.clock.now();
  // while the revocation feed is down, another replica's revocation could not reach this cache: read through
  let token = ctx.revocations?.live() === false ? null : ctx.recent.get(tokenId);
  if (token && isIdle(token, now)) token = null;
  token ??= await load(ctx, tokenId);
  const digest = ctx.secrets.digest(bearer);
  if (!token || !ctx.secrets.sameDigest(token.secretDigest, digest)) throw unauthenticated();
  if (token.revokedAt === null && isIdle(token, now)) throw timedOutIdle(token);
  if (!isActive(token, now)) throw token.idledAt !== null ? timedOutIdle(token) : unauthenticated();
  return recordActivity(ctx, token);
}
