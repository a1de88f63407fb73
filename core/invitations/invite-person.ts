import { invalidInput } from '../errors.ts';
import type { Mail } from '../ports/mailer.ts';
import { checkLimitsFitRole, linkParent, newLinkNode, requireOwner, requireRoot, type LinkTerms } from '../tenancy/authority.ts';
import type { Token } from '../tenancy/token.ts';
import { INVITATION_ID_PREFIX, INVITATION_LIFETIME_MS, type Invitation } from './invitation.ts';
import type { InvitationContext } from './invitation-context.ts';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * Invites an address into the caller's tenant with a role (docs/decisions.md, "Invitations"): root only, an owner only
 * by an owner, a member's limits fitting under the inviter by the one rule (checked now and again at acceptance). The
 * code is mailed, within the address's mail allowance (past it `mailed` is false and nothing leaves), and never answered.
 */
export async function invitePerson(ctx: InvitationContext, caller: Token, email: string, terms: LinkTerms): Promise<Invitation> {
  requireRoot(caller, 'inviting a person');
  if (terms.role === 'owner') requireOwner(caller, 'inviting an owner');
  checkLimitsFitRole(terms);
  const address = email.trim();
  if (!EMAIL.test(address) || address.length > 254) throw invalidInput(['body', 'email'], 'must be an email address');
  const code = ctx.secrets.newSecret('gcpinv');
  const { invitation, tenantName } = await ctx.storage.transaction(async (uow) => {
    const now = ctx.clock.now();
    const parent = await linkParent(uow, caller, now);
    // the node the person would get, made now only to hold the invitation to the one rule (an owner hangs from the tenant)
    if (terms.role !== 'owner') newLinkNode(ctx.ids, caller.tenantId, parent.chain, terms, null, now);
    const invitation: Invitation = {
      id: ctx.ids.newId(INVITATION_ID_PREFIX),
      tenantId: caller.tenantId,
      email: address,
      role: terms.role,
      spendLimitCents: terms.spendLimitCents ?? null,
      maxRentalHours: terms.maxRentalHours ?? null,
      codeDigest: ctx.secrets.digest(code),
      invitedByTokenId: caller.id,
      parentNodeId: parent.chain[0]!.id,
      status: 'pending',
      mailed: await ctx.allowance.take(address),
      expiresAt: new Date(now.getTime() + INVITATION_LIFETIME_MS),
      createdAt: now,
      endedAt: null,
      acceptedBy: null,
    };
    await uow.invitations.add(invitation);
    return { invitation, tenantName: (await uow.tenants.get(caller.tenantId))?.name ?? caller.tenantId };
  });
  if (invitation.mailed) ctx.mail?.send(invitationMail(invitation, code, tenantName));
  return invitation;
}

const article = (role: string) => (/^[aeiou]/.test(role) ? 'an' : 'a');

/** The invitee's mail: the one place the code is ever shown. */
export const invitationMail = (invitation: Invitation, code: string, tenantName: string): Mail => ({
  to: invitation.email,
  subject: 'You are invited to a gpu-control-plane tenant',
  text: [
    `You are invited to join the tenant "${tenantName}" as ${article(invitation.role)} ${invitation.role}.`,
    '',
    `Invitation code: ${code}`,
    '',
    'Sign in with this address (sign up first if you have no account), then accept it:',
    `  gpuctl people accept ${code}`,
    '  or the console\'s People page, or POST /v1/invitations/accept {"code": "..."} with your session.',
    `The code works once, until ${invitation.expiresAt.toISOString()}. If you did not expect it, ignore this mail.`,
  ].join('\n'),
});
