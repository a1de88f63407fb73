import { z } from 'zod';
import type { InvitationService } from '../../../core/invitations/invitation-service.ts';
import { defineRoute, type RouteDef } from '../route.ts';
import { InvitationAccept, InvitationAcceptedOut, InvitationCreate, InvitationIdParams, InvitationOut, invitationOut } from '../schemas/invitations.ts';

const tags = ['identities'];
const root = { kind: 'bearer', scope: 'manage', root: true } as const;

/** Invitations from a tenant (docs/decisions.md, "Invitations"): root invites, lists and revokes; the invitee accepts. */
export function invitationRoutes(invitations: InvitationService): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/invitations',
      operationId: 'createInvitation',
      summary: 'Invite an address to join this tenant with a role: a single-use code valid 7 days is mailed to it',
      tags,
      access: root,
      body: InvitationCreate,
      responses: [{ status: 201, description: 'Invited; the code went by mail only (mailed: false past the address\'s mail allowance)', schema: InvitationOut }],
      async handle({ caller, body }) {
        const invitation = await invitations.invite(caller!, body.email, {
          role: body.role,
          ...(body.spend_limit_usd !== undefined && { spendLimitCents: body.spend_limit_usd }),
          ...(body.max_rental_hours !== undefined && { maxRentalHours: body.max_rental_hours }),
        });
        return { status: 201, body: invitationOut(invitation, invitations.clock.now()) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/invitations',
      operationId: 'listInvitations',
      summary: "This tenant's invitations, newest first",
      tags,
      access: root,
      responses: [{ status: 200, description: 'Newest first', schema: z.array(InvitationOut) }],
      async handle({ caller }) {
        const now = invitations.clock.now();
        return { status: 200, body: (await invitations.list(caller!)).map((invitation) => invitationOut(invitation, now)) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/invitations/{invitation_id}',
      operationId: 'revokeInvitation',
      summary: 'Revoke an invitation: its code stops working',
      tags,
      access: root,
      params: InvitationIdParams,
      responses: [
        { status: 204, description: 'Revoked (or it had expired or been revoked already)' },
        { status: 409, description: 'It was accepted: remove the person instead' },
      ],
      async handle({ caller, params }) {
        await invitations.revoke(caller!, params.invitation_id);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/invitations/accept',
      operationId: 'acceptInvitation',
      summary: 'Accept an invitation with your own console session (the invited address): you join that tenant with its role',
      tags,
      access: { kind: 'bearer', scope: null },
      body: InvitationAccept,
      responses: [
        { status: 200, description: 'Joined: sign in to it with tenant_id, or switch (POST /v1/auth/switch)', schema: InvitationAcceptedOut },
        { status: 403, description: "Not a console session: only the invitee's own session accepts" },
        { status: 404, description: "No pending invitation with this code for your address (used, revoked, expired or another address's: all alike)" },
        { status: 409, description: 'You are a person of that tenant already' },
      ],
      async handle({ caller, body }) {
        const joined = await invitations.accept(caller!, body.code);
        return { status: 200, body: { tenant_id: joined.tenantId, role: joined.role } };
      },
    }),
  ];
}
