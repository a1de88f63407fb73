import { z } from 'zod';
import { shownStatus, type Invitation } from '../../../core/invitations/invitation.ts';
import { ROLES } from '../../../core/tenancy/roles.ts';
import { dateTimeOut, resourceId, usdAmount } from './common.ts';

export const InvitationCreate = z
  .strictObject({
    email: z.string().trim().min(3).max(254).meta({ description: 'Who is invited: the code is mailed there, and only a session of this address accepts it.' }),
    role: z.enum(ROLES).meta({ description: 'The role they join with; an owner is invited only by an owner.' }),
    spend_limit_usd: usdAmount().optional().meta({ description: "A member's spend limit, > 0; only a member carries one." }),
    max_rental_hours: z.int().min(1).max(100_000).optional().meta({ description: "A member's longest rental in hours." }),
  })
  .meta({ id: 'InvitationCreate', examples: [{ email: 'colleague@example.com', role: 'member', spend_limit_usd: '50.00', max_rental_hours: 24 }] });

export const InvitationOut = z
  .object({
    id: z.string(),
    email: z.string(),
    role: z.enum(ROLES),
    spend_limit_cents: z.int().nullable(),
    max_rental_hours: z.int().nullable(),
    status: z.enum(['pending', 'accepted', 'revoked', 'expired']),
    mailed: z.boolean().meta({ description: "False when the address's mail allowance was spent: nothing was mailed; invite again later." }),
    invited_by_token_id: z.string(),
    expires_at: dateTimeOut(),
    created_at: dateTimeOut(),
  })
  .meta({ id: 'InvitationOut', description: 'The code is never shown: it is mailed to the address only.' });

export const InvitationAccept = z
  .strictObject({ code: z.string().trim().min(1).max(200).meta({ description: 'From the invitation mail.' }) })
  .meta({ id: 'InvitationAccept', examples: [{ code: 'gcpinv_9q4m2xk7c3rwh8vt2b6n' }] });

export const InvitationAcceptedOut = z.object({ tenant_id: z.string(), role: z.enum(ROLES) }).meta({ id: 'InvitationAcceptedOut' });

export const InvitationIdParams = z.object({ invitation_id: resourceId('inv') });

export const invitationOut = (invitation: Invitation, now: Date): z.input<typeof InvitationOut> => ({
  id: invitation.id,
  email: invitation.email,
  role: invitation.role,
  spend_limit_cents: invitation.spendLimitCents,
  max_rental_hours: invitation.maxRentalHours,
  status: shownStatus(invitation, now),
  mailed: invitation.mailed,
  invited_by_token_id: invitation.invitedByTokenId,
  expires_at: invitation.expiresAt.toISOString(),
  created_at: invitation.createdAt.toISOString(),
});
