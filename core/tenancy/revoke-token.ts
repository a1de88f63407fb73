import { DomainError, notFound } from '../errors.ts';
import { announceRevoked, type TenancyContext } from './context.ts';
import { endSubtree } from '../bookings/end-subtree.ts';
import { requireOwnerOver } from './authority.ts';
import { administers, type Token } from './token.ts';

/**
 * Revokes a token and everything under it (end-subtree.ts). A token may always revoke itself; others need manage, and
 * only an owner's authority ends an owner's credentials (requireOwnerOver).
 */
export async function revokeToken(ctx: TenancyContext, caller: Token, tokenId: string): Promise<void> {
  if (tokenId !== caller.id && !caller.scopes.includes('manage')) {
    throw new DomainError('SCOPE_REQUIRED', 'revoking another token needs the manage scope');
  }
  const revoked = await ctx.storage.transaction(async (uow) => {
    const targetChain = await uow.tokens.chain(caller.tenantId, tokenId);
    const target = targetChain[0];
    if (!target || !administers(caller, target)) throw notFound(`token ${tokenId}`);
    if (target.id !== caller.id) requireOwnerOver(await uow.tokens.chain(caller.tenantId, caller.id), targetChain, `token ${tokenId}`);
    return endSubtree(uow, caller.tenantId, tokenId, ctx.clock.now());
  });
  await announceRevoked(ctx, revoked);
}
