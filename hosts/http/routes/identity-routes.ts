import type { PeopleService } from '../../../core/identity/people-service.ts';
import { defineRoute, type RouteDef } from '../route.ts';
import { IdentityIdParams, IdentityOut, identityOut } from '../schemas/identities.ts';
import { z } from 'zod';

const tags = ['identities'];

/** A tenant's people: who can sign in to it, and removing one (docs/decisions.md, "Linking people"). */
export function identityRoutes(people: PeopleService): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/identities',
      operationId: 'listIdentities',
      summary: 'The people linked to this tenant: each signs in to it with every scope',
      tags,
      access: { kind: 'bearer', scope: 'read' },
      responses: [{ status: 200, description: 'Oldest link first', schema: z.array(IdentityOut) }],
      async handle({ caller }) {
        return { status: 200, body: (await people.list(caller!)).map(identityOut) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/identities/{identity_id}',
      operationId: 'removeIdentity',
      summary: 'Unlink a person: their console sessions in this tenant end, with every token those issued',
      tags,
      access: { kind: 'bearer', scope: 'manage' },
      params: IdentityIdParams,
      responses: [
        { status: 204, description: 'Unlinked; their sessions and the tokens those issued are revoked' },
        { status: 409, description: 'The last person of a tenant without a root token (manage, no cap, no max_rental_hours, no expiry) cannot be removed' },
      ],
      async handle({ caller, params }) {
        await people.remove(caller!, params.identity_id);
        return { status: 204 };
      },
    }),
  ];
}
