import { DomainError, notFound } from '../errors.ts';
import { identityLinkedEvent } from '../events/identity-events.ts';
import { addLink } from '../identity/link-or-provision.ts';
import type { IdentityLink } from '../identity/links.ts';
import type { Role } from '../tenancy/roles.ts';
import { lockLiveChain, stillInvites } from '../tenancy/authority.ts';
import { actingNodeId, type Token } from '../tenancy/token.ts';
import type { UnitOfWork } from '../ports/storage.ts';
import type { InvitationContext } from './invitation-context.ts';

/** The node an inviting credential acted for (its person's link for a session), for invitations that did not keep it. */
async function inviterNodeOf(uow: UnitOfWork, tokenId: string): Promise<string> {
  const token = await uow.tokens.findById(tokenId);
  return token ? actingNodeId(token) : tokenId;
}

/** Used, revoked, expired, another address's, or no such code: all answer alike, so a code tells nothing. */
const NO_INVITATION = () => notFound('an invitation with this code for your address');

/**
 * The invitee accepts with their own console session (docs/decisions.md, "Invitations"): the code must be pending and
 * unexpired and its address the session's person's (any capitals); they join the inviting tenant with the role and
 * limits, under the node the inviter acted for (an owner from the tenant itself), while that node is still live and
 * still root (an owner's, for an owner: stillInvites), and the one rule checked again. Answers where and how.
 */
export async function acceptInvitation(ctx: InvitationContext, caller: Token, code: string): Promise<{ tenantId: string; role: Role }> {
  if (caller.kind !== 'session') throw new DomainError('SCOPE_REQUIRED', "accepting an invitation needs the invitee's console session (sign in with the invited address)");
  const joined = await ctx.storage.transaction(async (uow): Promise<IdentityLink> => {
    const now = ctx.clock.now();
    const person = await uow.identities.holderOf(caller.id);
    const self = person ? await uow.identities.find(person.provider, person.subject, caller.tenantId) : null;
    const invitation = await uow.invitations.lockByDigest(ctx.secrets.digest(code.trim()));
    const fits =
      person && self?.email && invitation && invitation.status === 'pending' && invitation.expiresAt.getTime() > now.getTime() &&
      invitation.email.toLowerCase() === self.email.toLowerCase();
    if (!fits || !person || !self || !invitation) throw NO_INVITATION();
    if (await uow.identities.find(person.provider, person.subject, invitation.tenantId)) {
      throw new DomainError('CONFLICT', `you are a person of tenant ${invitation.tenantId} already; sign in to it with tenant_id`);
    }
    const inviterChain = await lockLiveChain(uow, invitation.tenantId, invitation.parentNodeId ?? (await inviterNodeOf(uow, invitation.invitedByTokenId)), now);
    // the authority the invitation came from ended or narrowed (its inviter revoked, removed or demoted): it went with it
    if (!stillInvites(inviterChain[0], invitation.role, now)) throw NO_INVITATION();
    const parentChain = invitation.role === 'owner' ? [] : inviterChain;
    const identity = { provider: person.provider, subject: person.subject, email: self.email, login: self.login };
    const link = await addLink(ctx, uow, identity, invitation.tenantId, invitation.invitedByTokenId, parentChain, invitation.role, now, {
      spendLimitCents: invitation.spendLimitCents,
      maxRentalHours: invitation.maxRentalHours,
    });
    await uow.invitations.update({ ...invitation, status: 'accepted', endedAt: now, acceptedBy: link.id });
    await uow.events.emit(identityLinkedEvent(link, now));
    return link;
  });
  await ctx.people.announceLinked(joined);
  return { tenantId: joined.tenantId, role: joined.role };
}
