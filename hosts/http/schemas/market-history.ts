import { z } from 'zod';
import type { History, PricePoint } from '../../../core/market/price-history.ts';
import { dateTime, dateTimeOut } from './common.ts';

export const PriceHistoryQuery = z
  .object({
    gpu_type: z.string().trim().min(1, 'must not be empty').max(64).meta({ description: 'GPU family, e.g. H100 (case and spaces do not matter: "rtx 4090" works).', examples: ['H100'] }),
    provider: z.string().trim().min(1).max(40).optional().meta({ description: "One provider's points; left out: every enabled provider's.", examples: ['sandbox'] }),
    granularity: z.enum(['hour', 'day']).default('hour').meta({ description: 'hour: each hour\'s last snapshot; day: the day\'s lowest price, the lower median of its hourly medians, its last hour\'s GPUs.' }),
    since: dateTime('2026-11-20T00:00:00Z')
      .optional()
      .meta({ description: 'From this moment (its hour or UTC day included). Default: 7 days before until by hour, 90 days by day.' }),
    until: dateTime('2026-11-21T00:00:00Z').optional().meta({ description: 'Up to this moment, excluded. Default: now.' }),
  })
  .meta({ id: 'PriceHistoryQuery' });

const PricePointOut = z
  .object({
    at: dateTimeOut().meta({ description: 'The start of the hour (or UTC day) the point stands for.' }),
    provider: z.string(),
    min_price_per_gpu_hour_cents: z.int().meta({ description: 'The lowest verified per-GPU price, in cents per GPU-hour.' }),
    median_price_per_gpu_hour_cents: z.int().meta({ description: 'The middle verified per-GPU price (the lower middle one of an even count).' }),
    available_gpus: z.int().meta({ description: 'GPUs available in verified offers.' }),
  })
  .meta({ id: 'PricePointOut' });

export const PriceHistoryOut = z
  .object({
    gpu_type: z.string().meta({ description: 'The GPU family asked for, as the market names it.' }),
    points: z.array(PricePointOut).meta({ description: 'Oldest first (then by provider).' }),
  })
  .meta({ id: 'PriceHistoryOut' });

const pointOut = (p: PricePoint): z.input<typeof PricePointOut> => ({
  at: p.at.toISOString(),
  provider: p.provider,
  min_price_per_gpu_hour_cents: p.minPerGpuCents,
  median_price_per_gpu_hour_cents: p.medianPerGpuCents,
  available_gpus: p.availableGpus,
});

export const priceHistoryOut = (h: History): z.input<typeof PriceHistoryOut> => ({ gpu_type: h.gpuType, points: h.points.map(pointOut) });
