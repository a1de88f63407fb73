import { z } from 'zod';
import type { ActsOn } from '../../../core/tenancy/acts-on.ts';
import type { RentalService } from '../../../core/rentals/rental-service.ts';
import type { Instance } from '../../../core/rentals/instance.ts';
import { defineRoute, type RouteDef, type RouteResponse } from '../route.ts';
import { ErrorOut } from '../schemas/common.ts';
import {
  figuresOut,
  InstanceCreate,
  InstanceIdParams,
  InstanceOut,
  instanceOut,
  QuoteCreate,
  QuoteOut,
  quoteOut,
  RentalDryRunOut,
  ScheduleRemovalRequest,
} from '../schemas/instances.ts';

const read = { kind: 'bearer', scope: 'read' } as const;
const rent = { kind: 'bearer', scope: 'rent' } as const;
const LIST_LIMIT = 500;

const MADE_BY_ANOTHER = { status: 403, description: 'The token lacks the `rent` scope, or the machine was made by another credential and this one is not root (MADE_BY_ANOTHER)' };

export function instanceRoutes(rentals: RentalService, actsOn: ActsOn): RouteDef[] {
  const out = (instance: Instance) => instanceOut(instance, rentals.supportedOperations(instance));
  const action = (path: string, operationId: string, summary: string, outcomes: RouteResponse[], run: (tenantId: string, id: string) => Promise<Instance>) =>
    defineRoute({
      method: 'post',
      path,
      operationId,
      summary,
      tags: ['instances'],
      access: rent,
      params: InstanceIdParams,
      responses: [{ status: 200, description: 'The instance', schema: InstanceOut }, MADE_BY_ANOTHER, ...outcomes],
      async handle({ caller, params }) {
        await actsOn.require(caller!, 'instance', params.instance_id);
        return { status: 200, body: out(await run(caller!.tenantId, params.instance_id)) };
      },
    });

  return [
    defineRoute({
      method: 'post',
      path: '/v1/instances',
      operationId: 'rentInstance',
      commitsMoney: true,
      summary: 'Rent a node from GET /v1/gpus, the cheapest match of a search, or a quote; the first hour is charged now',
      tags: ['instances'],
      access: rent,
      body: InstanceCreate,
      responses: [
        { status: 200, description: 'dry_run: what the rental would charge, commit and leave of the cap; nothing was changed', schema: RentalDryRunOut },
        {
          status: 201,
          description: 'Renting: the machine is provisioning (Idempotent-Replayed: true on a retry)',
          schema: InstanceOut,
          headers: { 'Idempotent-Replayed': z.literal('true').optional().meta({ description: 'Present on a retry with the same idempotency_key: this is the instance rented the first time.' }) },
        },
        { status: 402, description: 'Balance short of the first hour, or the spend cap would be exceeded', schema: ErrorOut },
        { status: 404, description: 'quote_id names no quote of this tenant', schema: ErrorOut },
        {
          status: 409,
          description:
            'The node is gone, nothing matching the search passed, the quote expired or was used, its price rose (code PRICE_CHANGED), the account is paused, or the idempotency key was used for another request',
          schema: ErrorOut,
        },
        { status: 503, description: 'Renting is not open yet, or the provider cannot be reached; nothing charged', schema: ErrorOut },
      ],
      async handle({ caller, body }) {
        const request = {
          nodeId: body.node_id ?? null,
          // left out when not sent: a node id's request (and its idempotency digest) reads as it always has
          ...(body.search && { search: body.search }),
          ...(body.quote_id && { quoteId: body.quote_id }),
          name: body.name ?? null,
          sshPublicKey: body.ssh_public_key ?? null,
          terminationHours: body.termination_hours ?? null,
          idempotencyKey: body.idempotency_key ?? null,
          sshKeyId: body.ssh_key_id ?? null,
          imageId: body.image_id ?? null,
          templateId: body.template_id ?? null,
          volumeIds: body.volume_ids ?? null,
          env: body.env ?? null,
          ports: body.ports ?? null,
          startupScript: body.startup_script ?? null,
          recovery: body.recovery ? { maxAttempts: body.recovery.max_attempts } : null,
        };
        if (body.dry_run) return { status: 200, body: figuresOut(await rentals.dryRun(caller!, request)) };
        const { instance, replayed } = await rentals.rent(caller!, request);
        return { status: 201, body: out(instance), ...(replayed && { headers: { 'idempotent-replayed': 'true' } }) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/quotes',
      operationId: 'quoteRental',
      summary: 'Price a rental now and hold the price 120 s: POST /v1/instances with its quote_id rents it at no more; nothing is charged',
      tags: ['instances'],
      access: rent,
      body: QuoteCreate,
      responses: [
        { status: 201, description: 'The quote: what the rental would charge, commit and leave of the cap', schema: QuoteOut },
        { status: 402, description: 'The rental would be refused: balance short of the first hour, or past the spend cap', schema: ErrorOut },
        { status: 409, description: 'The node is gone, nothing matching the search passed, or the account is paused', schema: ErrorOut },
        { status: 503, description: 'Renting is not open yet, or the provider cannot be reached', schema: ErrorOut },
      ],
      async handle({ caller, body }) {
        const quote = await rentals.quote(caller!, { nodeId: body.node_id ?? null, search: body.search ?? null, terminationHours: body.termination_hours ?? null, name: body.name ?? null });
        return { status: 201, body: quoteOut(quote) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/instances',
      operationId: 'listInstances',
      summary: `The tenant's instances, newest first (at most ${LIST_LIMIT})`,
      tags: ['instances'],
      access: read,
      responses: [{ status: 200, description: 'Instances', schema: z.array(InstanceOut) }],
      async handle({ caller }) {
        return { status: 200, body: (await rentals.list(caller!.tenantId, LIST_LIMIT)).map(out) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/instances/{instance_id}',
      operationId: 'getInstance',
      summary: 'One instance, with its provider asked how a starting or rebooting machine is doing',
      tags: ['instances'],
      access: read,
      params: InstanceIdParams,
      responses: [{ status: 200, description: 'The instance', schema: InstanceOut }],
      async handle({ caller, params }) {
        return { status: 200, body: out(await rentals.get(caller!.tenantId, params.instance_id)) };
      },
    }),
    // terminating a machine already gone answers it again: no conflict
    action('/v1/instances/{instance_id}/terminate', 'terminateInstance', 'Stop and remove the machine; unused time after the first hour is refunded', [], (t, id) => rentals.terminate(t, id)),
    action(
      '/v1/instances/{instance_id}/reboot',
      'rebootInstance',
      'Reboot the machine (409 when its provider cannot)',
      [
        { status: 409, description: 'Not running, or its provider cannot reboot or refused to' },
        { status: 503, description: 'The provider could not be reached' },
      ],
      (t, id) => rentals.reboot(t, id),
    ),
    defineRoute({
      method: 'post',
      path: '/v1/instances/{instance_id}/schedule-removal',
      operationId: 'scheduleRemoval',
      summary: 'Set when the machine removes itself; the last block is charged pro rata',
      tags: ['instances'],
      access: rent,
      params: InstanceIdParams,
      body: ScheduleRemovalRequest,
      responses: [
        { status: 200, description: 'The instance', schema: InstanceOut },
        MADE_BY_ANOTHER,
        { status: 409, description: 'The instance is already ended: nothing left to remove' },
      ],
      async handle({ caller, params, body }) {
        await actsOn.require(caller!, 'instance', params.instance_id);
        return { status: 200, body: out(await rentals.scheduleRemoval(caller!.tenantId, params.instance_id, body.removal_scheduled_at)) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/instances/{instance_id}/schedule-removal',
      operationId: 'cancelScheduledRemoval',
      summary: 'Cancel the scheduled removal',
      tags: ['instances'],
      access: rent,
      params: InstanceIdParams,
      responses: [
        { status: 200, description: 'The instance', schema: InstanceOut },
        MADE_BY_ANOTHER,
        { status: 409, description: 'The instance is already ended: nothing left to remove' },
      ],
      async handle({ caller, params }) {
        await actsOn.require(caller!, 'instance', params.instance_id);
        return { status: 200, body: out(await rentals.scheduleRemoval(caller!.tenantId, params.instance_id, null)) };
      },
    }),
  ];
}
