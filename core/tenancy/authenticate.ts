import { unauthenticated, type TenancyContext } from './context.ts';
import { isActive, type Token } from './token.ts';

/**
 * A bearer secret is "<prefix>_<token id>_<random>": the id part lets authentication load one row,
 * whose stored digest is then compared in constant time.
 */
const tokenIdOf = (bearer: string): string | null => {
  const match = /^gcp_(tok_[a-z0-9]+)_[A-Za-z0-9_-]{20,}$/.exec(bearer);
  return match?.[1] ?? null;
};

/** The active token behind a bearer secret, or UNAUTHENTICATED. The row may come from this replica's cache. */
export async function authenticate(ctx: TenancyContext, bearer: string): Promise<Token> {
  const tokenId = tokenIdOf(bearer);
  if (!tokenId) throw unauthenticated();
  let token = ctx.recent.get(tokenId);
  if (!token) {
    token = await ctx.storage.read((uow) => uow.tokens.findById(tokenId));
    if (token) ctx.recent.put(token);
  }
  const digest = ctx.secrets.digest(bearer);
  if (!token || !ctx.secrets.sameDigest(token.secretDigest, digest) || !isActive(token, ctx.clock.now())) {
    throw unauthenticated();
  }
  return token;
}
