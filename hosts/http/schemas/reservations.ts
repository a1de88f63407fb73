import { z } from 'zod';
import { shownFailure, shownStatus, type ReservationView } from '../../../core/reservations/reservation.ts';
import { TemplateSearchIn } from './catalog.ts';
import { dateTime, dateTimeOut, EXAMPLE_TIME, resourceId } from './common.ts';
import { filterFields } from './market.ts';

/** A JSON number read as the query text GET /v1/gpus would get, then by that filter's own schema. */
const asText = (value: unknown) => (typeof value === 'number' ? String(value) : value);

export const ReservationCreate = z
  .strictObject({
    node_id: z.string().trim().min(3).max(200).optional().meta({ description: 'A node from GET /v1/gpus, e.g. sandbox:100123; or send search.' }),
    search: TemplateSearchIn.optional().meta({ description: 'GET /v1/gpus filters (all but limit), as JSON values: the cheapest match at the start is rented; or send node_id.' }),
    starts_at: dateTime().meta({ description: 'ISO 8601: from 5 minutes to 90 days ahead.' }),
    hours: z.int().min(1).max(720).meta({ description: 'Whole hours, 1 to 720: the machine is removed at starts_at + hours (ends_at).' }),
    name: z.string().trim().min(1, 'must not be blank').max(200),
    template_id: resourceId('tpl').optional().meta({ description: 'A saved template (POST /v1/templates) the machine is set up from.' }),
    ssh_key_id: resourceId('key').optional().meta({ description: 'One of your saved SSH keys (POST /v1/ssh-keys), installed on the machine.' }),
    idempotency_key: z.string().min(1).max(200).optional().meta({ description: 'Retry with the same key and body to get the same reservation, never a second one.' }),
    max_price_per_gpu_hour: z
      .preprocess(asText, filterFields.max_price_per_gpu_hour)
      .optional()
      .meta({
        description:
          'USD per GPU-hour the start may rent at, at most, instead of the quote (rate_cents_per_hour per GPU): a search, or a node that is gone, rents the cheapest match at or under it.',
      }),
  })
  .meta({
    id: 'ReservationCreate',
    examples: [{ node_id: 'sandbox:100123', starts_at: EXAMPLE_TIME, hours: 4, name: 'nightly-eval', idempotency_key: 'nightly-eval-2026-12-01' }],
  });

export const ReservationIdParams = z.object({ reservation_id: resourceId('res') });

export const ReservationOut = z
  .object({
    id: z.string(),
    status: z.enum(['scheduled', 'starting', 'active', 'completed', 'failed', 'cancelled']).meta({
      description: 'scheduled -> starting (a sweep is renting it) -> active (instance_id) -> completed; or failed (see failure), or cancelled.',
    }),
    starts_at: dateTimeOut(),
    hours: z.int(),
    ends_at: dateTimeOut().meta({ description: 'starts_at + hours: the machine is removed then.' }),
    node_id: z.string().nullable().meta({ description: 'The node asked for; null when search chooses one at the start.' }),
    search: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).nullable().meta({ description: 'GET /v1/gpus filters, as the search reads them; null for a node_id.' }),
    instance_id: z.string().nullable().meta({ description: 'The rental made at the start (its idempotency_key is this reservation id).' }),
    rate_cents_per_hour: z.int().meta({ description: 'The quote for the whole machine until the start (quote x hours is held on the token cap); the rental’s rate once started.' }),
    failure: z.string().nullable().meta({ description: 'Why it did not start (status failed); nothing was charged.' }),
    created_at: dateTimeOut(),
  })
  .meta({ id: 'ReservationOut' });

export const reservationOut = (r: ReservationView): z.input<typeof ReservationOut> => ({
  id: r.id,
  status: shownStatus(r),
  starts_at: r.startsAt.toISOString(),
  hours: r.hours,
  ends_at: r.endsAt.toISOString(),
  node_id: r.nodeId,
  search: r.search === null ? null : { ...r.search },
  instance_id: r.instanceId,
  rate_cents_per_hour: r.rateCentsPerHour,
  failure: shownFailure(r),
  created_at: r.createdAt.toISOString(),
});
