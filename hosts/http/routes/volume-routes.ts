import { z } from 'zod';
import type { ActsOn } from '../../../core/tenancy/acts-on.ts';
import type { VolumeService } from '../../../core/volumes/volume-service.ts';
import { defineRoute, type RouteDef } from '../route.ts';
import { VolumeCreate, VolumeIdParams, VolumeOut, volumeOut } from '../schemas/volumes.ts';

const tags = ['volumes'];

/** Volumes: `rent` to make and delete (they cost money), `read` to list. */
export function volumeRoutes(volumes: VolumeService, actsOn: ActsOn): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/volumes',
      operationId: 'createVolume',
      commitsMoney: true,
      summary: 'Make a persistent volume at a provider that has them; its storage is billed per started hour',
      tags,
      access: { kind: 'bearer', scope: 'rent' },
      body: VolumeCreate,
      responses: [
        { status: 201, description: 'Made', schema: VolumeOut },
        {
          status: 202,
          description:
            'The provider gave no answer (timeout, outage): the volume stays `creating`; the sweep makes it `available` once the provider shows it (billed from its creation) or `failed` at no cost if it never does within the provisioning deadline',
          schema: VolumeOut,
        },
        { status: 402, description: 'Available funds short of its first 24 hours of storage, or its storage for `hours` would pass the spend cap; nothing made' },
        { status: 409, description: 'Renting is paused, the tenant would hold more than VOLUME_MAX_GB_PER_TENANT, or the provider refused the volume, or answered only after it was given up (nothing is billed)' },
        { status: 503, description: 'The provider\'s volume regions could not be read; nothing was made' },
      ],
      async handle({ caller, body }) {
        const volume = await volumes.create(caller!, { name: body.name, sizeGb: body.size_gb, provider: body.provider, region: body.region, hours: body.hours ?? null });
        return { status: volume.status === 'creating' ? 202 : 201, body: volumeOut(volume) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/volumes',
      operationId: 'listVolumes',
      summary: 'The tenant\'s volumes (deleted ones are gone)',
      tags,
      access: { kind: 'bearer', scope: 'read' },
      responses: [{ status: 200, description: 'Newest first', schema: z.array(VolumeOut) }],
      async handle({ caller }) {
        return { status: 200, body: (await volumes.list(caller!.tenantId)).map(volumeOut) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/volumes/{volume_id}',
      operationId: 'deleteVolume',
      summary: 'Delete a volume no machine uses (upstream too); storage is billed up to now',
      tags,
      access: { kind: 'bearer', scope: 'rent' },
      params: VolumeIdParams,
      responses: [
        { status: 204, description: 'Deleted' },
        { status: 403, description: 'The token lacks the `rent` scope, or the volume was made by another credential and this one is not root (MADE_BY_ANOTHER)' },
        { status: 409, description: 'Attached to a live instance, still being made, or the provider refused' },
        { status: 503, description: 'The provider could not be reached; the volume stays' },
      ],
      async handle({ caller, params }) {
        await actsOn.require(caller!, 'volume', params.volume_id);
        await volumes.delete(caller!.tenantId, params.volume_id);
        return { status: 204 };
      },
    }),
  ];
}
