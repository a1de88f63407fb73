import type { PeopleService } from '../../../core/identity/people-service.ts';
import { defineRoute, type RouteDef } from '../route.ts';
import { IdentityIdParams, IdentityOut, IdentityUpdate, identityOut } from '../schemas/identities.ts';
import { z } from 'zod';

const tags = ['identities'];

/** A tenant's people: who can sign in to it with which role, changing and removing them (docs/decisions.md, "One tree of authority"). */
export function identityRoutes(people: PeopleService): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/identities',
      operationId: 'listIdentities',
      summary: "The people linked to this tenant, each with their role (and a member's limits)",
      tags,
      // people's addresses are the tenant's, not a member's (docs/decisions.md, "One tree of authority")
      access: { kind: 'bearer', scope: 'manage', tenantManage: true },
      responses: [{ status: 200, description: 'Oldest link first', schema: z.array(IdentityOut) }],
      async handle({ caller }) {
        return { status: 200, body: (await people.list(caller!)).map(identityOut) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/identities/{identity_id}',
      operationId: 'removeIdentity',
      summary: 'Unlink a person: their console sessions in this tenant end, with every token and person under them',
      tags,
      access: { kind: 'bearer', scope: 'manage', root: true },
      params: IdentityIdParams,
      responses: [
        { status: 204, description: 'Unlinked; their sessions and everything under them are revoked' },
        { status: 409, description: 'The last owner of the tenant cannot be removed' },
      ],
      async handle({ caller, params }) {
        await people.remove(caller!, params.identity_id);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/v1/identities/{identity_id}',
      operationId: 'updateIdentity',
      summary: "Change a person's role or a member's limits: at once for their sessions and every token under them",
      tags,
      access: { kind: 'bearer', scope: 'manage', root: true },
      params: IdentityIdParams,
      body: IdentityUpdate,
      responses: [
        { status: 200, description: 'The person as changed', schema: IdentityOut },
        { status: 409, description: 'The last owner of the tenant cannot be demoted' },
      ],
      async handle({ caller, params, body }) {
        const change = {
          ...(body.role !== undefined && { role: body.role }),
          ...(body.spend_limit_usd !== undefined && { spendLimitCents: body.spend_limit_usd }),
          ...(body.max_rental_hours !== undefined && { maxRentalHours: body.max_rental_hours }),
        };
        return { status: 200, body: identityOut(await people.update(caller!, params.identity_id, change)) };
      },
    }),
  ];
}
