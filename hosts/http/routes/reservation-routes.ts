import { z } from 'zod';
import type { ActsOn } from '../../../core/tenancy/acts-on.ts';
import type { ReservationService } from '../../../core/reservations/reservation-service.ts';
import { defineRoute, type RouteDef } from '../route.ts';
import { ErrorOut } from '../schemas/common.ts';
import { ReservationCreate, ReservationIdParams, ReservationOut, reservationOut } from '../schemas/reservations.ts';

const tags = ['reservations'];
const read = { kind: 'bearer', scope: 'read' } as const;
const rent = { kind: 'bearer', scope: 'rent' } as const;

/** Reservations: `rent` to make and cancel, `read` to read. */
export function reservationRoutes(reservations: ReservationService, actsOn: ActsOn): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/reservations',
      operationId: 'createReservation',
      commitsMoney: true,
      summary: 'Book a machine for a future window: quoted now, its cap commitment taken now, paid when the sweep starts it',
      tags,
      access: rent,
      body: ReservationCreate,
      responses: [
        {
          status: 201,
          description: 'Scheduled (Idempotent-Replayed: true on a retry)',
          schema: ReservationOut,
          headers: { 'Idempotent-Replayed': z.literal('true').optional().meta({ description: 'Present on a retry with the same idempotency_key: this is the reservation made the first time.' }) },
        },
        { status: 402, description: "The token's spend cap cannot hold quote x hours", schema: ErrorOut },
        { status: 409, description: 'The node is not available, nothing matches the search now, or the idempotency key was used for another request', schema: ErrorOut },
        { status: 503, description: 'Renting is not open yet, or the provider cannot be reached; nothing reserved', schema: ErrorOut },
      ],
      async handle({ caller, body }) {
        const { reservation, replayed } = await reservations.create(caller!, {
          nodeId: body.node_id ?? null,
          search: body.search ?? null,
          startsAt: body.starts_at,
          hours: body.hours,
          name: body.name,
          templateId: body.template_id ?? null,
          sshKeyId: body.ssh_key_id ?? null,
          idempotencyKey: body.idempotency_key ?? null,
          maxPricePerGpuCents: body.max_price_per_gpu_hour ?? null,
        });
        return { status: 201, body: reservationOut(reservation), ...(replayed && { headers: { 'idempotent-replayed': 'true' } }) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/reservations',
      operationId: 'listReservations',
      summary: "The tenant's reservations, newest first (at most 500)",
      tags,
      access: read,
      responses: [{ status: 200, description: 'Reservations', schema: z.array(ReservationOut) }],
      async handle({ caller }) {
        return { status: 200, body: (await reservations.list(caller!.tenantId)).map(reservationOut) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/reservations/due',
      operationId: 'listDueReservations',
      summary: 'Scheduled reservations starting within the next hour (starts_at <= now + 60 min), soonest first',
      tags,
      access: read,
      responses: [{ status: 200, description: 'Reservations', schema: z.array(ReservationOut) }],
      async handle({ caller }) {
        return { status: 200, body: (await reservations.due(caller!.tenantId)).map(reservationOut) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/reservations/{reservation_id}',
      operationId: 'getReservation',
      summary: 'One reservation',
      tags,
      access: read,
      params: ReservationIdParams,
      responses: [{ status: 200, description: 'The reservation', schema: ReservationOut }],
      async handle({ caller, params }) {
        return { status: 200, body: reservationOut(await reservations.get(caller!.tenantId, params.reservation_id)) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/reservations/{reservation_id}',
      operationId: 'cancelReservation',
      summary: 'Cancel: before the start free of charge; during the window the machine is terminated with the usual refund',
      tags,
      access: rent,
      params: ReservationIdParams,
      responses: [
        { status: 200, description: 'Cancelled', schema: ReservationOut },
        { status: 403, description: 'The token lacks the `rent` scope, or the reservation was made by another credential and this one is not root (MADE_BY_ANOTHER)' },
        { status: 409, description: 'It has ended already (completed, failed or cancelled): nothing left to cancel', schema: ErrorOut },
      ],
      async handle({ caller, params }) {
        await actsOn.require(caller!, 'reservation', params.reservation_id);
        return { status: 200, body: reservationOut(await reservations.cancel(caller!.tenantId, params.reservation_id)) };
      },
    }),
  ];
}
