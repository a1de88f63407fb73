import { DomainError, notFound } from '../errors.ts';
import { announceRevoked, type TenancyContext } from './context.ts';
import { endSubtree } from '../bookings/end-subtree.ts';
import { administers, type Token } from './token.ts';

/** Revokes a token and everything under it (end-subtree.ts). A token may always revoke itself; others need manage. */
export async function revokeToken(ctx: TenancyContext, caller: Token, tokenId: string): Promise<void> {
  if (tokenId !== caller.id && !caller.scopes.includes('manage')) {
    throw new DomainError('SCOPE_REQUIRED', 'revoking another token needs the manage scope');
  }
  const revoked = await ctx.storage.transaction(async (uow) => {
    const [target] = await uow.tokens.chain(caller.tenantId, tokenId);
    if (!target || !administers(caller, target)) throw notFound(`token ${tokenId}`);
    return endSubtree(uow, caller.tenantId, tokenId, ctx.clock.now());
  });
  await announceRevoked(ctx, revoked);
}
