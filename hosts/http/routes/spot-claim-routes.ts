import { z } from 'zod';
import type { ActsOn } from '../../../core/tenancy/acts-on.ts';
import type { SpotClaimService } from '../../../core/spot/spot-claim-service.ts';
import { defineRoute, type RouteDef } from '../route.ts';
import { ErrorOut } from '../schemas/common.ts';
import { SpotClaimCreate, SpotClaimIdParams, SpotClaimOut, spotClaimOut } from '../schemas/spot-claims.ts';

const tags = ['spot-claims'];
const read = { kind: 'bearer', scope: 'read' } as const;
const rent = { kind: 'bearer', scope: 'rent' } as const;

/** Spot claims: `rent` to make and release, `read` to read. */
export function spotClaimRoutes(claims: SpotClaimService, actsOn: ActsOn): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/spot-claims',
      operationId: 'createSpotClaim',
      commitsMoney: true,
      summary: 'Claim interruptible capacity at a bid: the sweep rents the cheapest spot offer at or under it, and the next one after each preemption',
      tags,
      access: rent,
      body: SpotClaimCreate,
      responses: [
        { status: 201, description: 'Pending: the next sweep pass (within a minute) rents its machine', schema: SpotClaimOut },
        { status: 402, description: "The token's spend cap cannot hold bid x gpu_count x hours", schema: ErrorOut },
        { status: 409, description: 'The node is not available now', schema: ErrorOut },
        { status: 503, description: 'Renting is not open yet, or the provider cannot be reached; nothing claimed', schema: ErrorOut },
      ],
      async handle({ caller, body }) {
        const claim = await claims.create(caller!, {
          nodeId: body.node_id ?? null,
          search: body.search ?? null,
          bidCentsPerGpuHour: body.max_price_per_gpu_hour,
          gpuCount: body.gpu_count,
          hours: body.hours ?? null,
          name: body.name,
          templateId: body.template_id ?? null,
          sshKeyId: body.ssh_key_id ?? null,
        });
        return { status: 201, body: spotClaimOut(claim) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/spot-claims',
      operationId: 'listSpotClaims',
      summary: "The tenant's spot claims, newest first (at most 500)",
      tags,
      access: read,
      responses: [{ status: 200, description: 'Spot claims', schema: z.array(SpotClaimOut) }],
      async handle({ caller }) {
        return { status: 200, body: (await claims.list(caller!.tenantId)).map(spotClaimOut) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/spot-claims/{claim_id}',
      operationId: 'getSpotClaim',
      summary: 'One spot claim',
      tags,
      access: read,
      params: SpotClaimIdParams,
      responses: [{ status: 200, description: 'The spot claim', schema: SpotClaimOut }],
      async handle({ caller, params }) {
        return { status: 200, body: spotClaimOut(await claims.get(caller!.tenantId, params.claim_id)) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/spot-claims/{claim_id}',
      operationId: 'releaseSpotClaim',
      summary: 'Release: its machine is terminated, the unused minutes refunded; the token cap keeps only what it spent',
      tags,
      access: rent,
      params: SpotClaimIdParams,
      responses: [
        { status: 200, description: 'Released', schema: SpotClaimOut },
        { status: 403, description: 'The token lacks the `rent` scope, or the claim was made by another credential and this one is not root (MADE_BY_ANOTHER)' },
        { status: 409, description: 'It ended already (released or expired)', schema: ErrorOut },
      ],
      async handle({ caller, params }) {
        await actsOn.require(caller!, 'spot claim', params.claim_id);
        return { status: 200, body: spotClaimOut(await claims.release(caller!.tenantId, params.claim_id)) };
      },
    }),
  ];
}
