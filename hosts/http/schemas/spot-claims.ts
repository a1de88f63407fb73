import { z } from 'zod';
import { chargedCents, shownStatus, type SpotClaimView } from '../../../core/spot/spot-claim.ts';
import { TemplateSearchIn } from './catalog.ts';
import { dateTimeOut, resourceId, usdAmount } from './common.ts';

/** USD 100,000 per GPU-hour: beyond any market, and safe for bid x gpu_count x hours in cents. */
const MAX_BID_CENTS = 10_000_000;

export const SpotClaimCreate = z
  .strictObject({
    node_id: z.string().trim().min(3).max(200).optional().meta({
      description: 'A node from GET /v1/gpus whose supported_operations lists spot: tried first; when it is gone or over the bid, the cheapest spot offer of its GPU type and count is rented. Or send search.',
    }),
    search: TemplateSearchIn.optional().meta({
      description: 'GET /v1/gpus filters (all but limit and max_price_per_gpu_hour), as JSON values: the cheapest matching spot offer at or under the bid is rented. Or send node_id.',
    }),
    max_price_per_gpu_hour: usdAmount({ maxCents: MAX_BID_CENTS }).meta({
      description: 'The bid: USD per GPU-hour (at most 2 decimals), compared with spot_price_per_gpu_hour_cents. A machine is rented at the spot price of the moment, never above it.',
    }),
    gpu_count: z.int().min(1).max(64).meta({ description: "The machine's exact GPU count." }),
    hours: z.int().min(1).max(720).optional().meta({
      description: "Whole hours, 1 to 720: the claim ends at created_at + hours (ends_at), its machine removed. Required when the token (or one that issued it) has a spend cap or a maximum rental duration; without it the claim lasts until released.",
    }),
    name: z.string().trim().min(1, 'must not be blank').max(200),
    template_id: resourceId('tpl').optional().meta({ description: 'A saved template (POST /v1/templates) each machine is set up from.' }),
    ssh_key_id: resourceId('key').optional().meta({ description: 'One of your saved SSH keys (POST /v1/ssh-keys), installed on each machine.' }),
  })
  .meta({ id: 'SpotClaimCreate', examples: [{ search: { gpu_type: 'H100' }, max_price_per_gpu_hour: '2.50', gpu_count: 1, hours: 4, name: 'batch-inference' }] });

export const SpotClaimIdParams = z.object({ claim_id: resourceId('spc') });

export const SpotClaimOut = z
  .object({
    id: z.string(),
    status: z.enum(['pending', 'active', 'preempted', 'released', 'expired']).meta({
      description:
        'pending (waiting for a spot offer at or under the bid) -> active (instance_id, provisioning or running) -> preempted (the provider took it back; the next sweep pass puts the claim back to pending) ... until released (DELETE) or expired (ends_at).',
    }),
    name: z.string(),
    node_id: z.string().nullable(),
    search: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).nullable(),
    gpu_count: z.int(),
    bid_cents_per_gpu_hour: z.int().meta({ description: 'The bid, in cents per GPU-hour.' }),
    hours: z.int().nullable(),
    instance_id: z.string().nullable().meta({ description: 'Its machine now (its last one once released or expired); null while pending.' }),
    preemptions: z.int().meta({ description: 'Machines the provider took back so far.' }),
    charged_cents: z.int().meta({ description: "What its machines cost so far, refunds taken off: each billed by the started minute at the spot price of its rental." }),
    last_error: z.string().nullable().meta({ description: 'While pending: why the last sweep pass rented nothing (no offer at or under the bid, funds short, ...).' }),
    ends_at: dateTimeOut().nullable().meta({ description: 'created_at + hours; null: until released.' }),
    created_at: dateTimeOut(),
  })
  .meta({ id: 'SpotClaimOut' });

export const spotClaimOut = (c: SpotClaimView): z.input<typeof SpotClaimOut> => ({
  id: c.id,
  status: shownStatus(c),
  name: c.name,
  node_id: c.nodeId,
  search: c.search === null ? null : { ...c.search },
  gpu_count: c.gpuCount,
  bid_cents_per_gpu_hour: c.bidCentsPerGpuHour,
  hours: c.hours,
  instance_id: c.instanceId,
  preemptions: c.preemptions,
  charged_cents: chargedCents(c),
  last_error: c.status === 'pending' ? c.lastError : null,
  ends_at: c.endsAt?.toISOString() ?? null,
  created_at: c.createdAt.toISOString(),
});
