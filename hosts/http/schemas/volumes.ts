import { z } from 'zod';
import type { Volume } from '../../../core/volumes/volume.ts';
import { monthlyCents } from '../../../core/volumes/pricing.ts';
import { dateTimeOut, resourceId } from './common.ts';

export const VolumeCreate = z
  .strictObject({
    name: z.string().trim().min(1, 'must not be blank').max(200),
    size_gb: z.int().min(1).max(10_000).meta({ description: 'Size in GB, 1 to 10000.' }),
    provider: z.string().trim().min(1).max(40).meta({ description: 'A provider with volumes (see supported_operations "volumes" on its nodes).' }),
    region: z.string().trim().min(1).max(100).meta({ description: 'The region (data center) to make it in; machines that use it must be there.' }),
    hours: z
      .int()
      .min(1)
      .max(8_760)
      .optional()
      .meta({
        description:
          "Its window: the sweep deletes it when these hours end, and its storage is never billed past them. Required when the token (or one that issued it) has a spend cap or max_rental_hours (at most that many); its storage for these hours is then committed on the token's cap.",
      }),
  })
  .meta({ id: 'VolumeCreate', examples: [{ name: 'datasets', size_gb: 100, provider: 'sandbox', region: 'us-east' }] });

export const VolumeIdParams = z.object({ volume_id: resourceId('vol') });

export const VolumeOut = z
  .object({
    id: z.string(),
    name: z.string(),
    size_gb: z.int(),
    provider: z.string(),
    region: z.string(),
    status: z.enum(['creating', 'available', 'attached', 'deleted', 'failed']),
    attached_instance_id: z.string().nullable(),
    price_per_gb_month_cents: z.int().meta({ description: 'Storage price per GB-month, in cents rounded up (display).' }),
    price_per_gb_hour_usd: z.string().meta({ description: 'What each GB-hour is billed: the monthly price / 730, rounded up to 6 decimals.' }),
    created_at: dateTimeOut(),
    ends_at: dateTimeOut().nullable().meta({ description: 'End of its window (hours): the sweep deletes it then. null: kept until deleted.' }),
  })
  .meta({ id: 'VolumeOut' });

export const volumeOut = (v: Volume): z.input<typeof VolumeOut> => ({
  id: v.id,
  name: v.name,
  size_gb: v.sizeGb,
  provider: v.provider,
  region: v.region,
  status: v.status,
  attached_instance_id: v.attachedInstanceId,
  price_per_gb_month_cents: monthlyCents(v.priceUsdPerGbMonth),
  price_per_gb_hour_usd: v.priceUsdPerGbHour,
  created_at: v.createdAt.toISOString(),
  ends_at: v.endsAt?.toISOString() ?? null,
});
