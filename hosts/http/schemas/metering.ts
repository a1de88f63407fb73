import { z } from 'zod';
import { parseQuantity } from '../../../core/metering/quantity.ts';
import type { SettleOutcome } from '../../../core/metering/settle-usage.ts';
import type { UsagePeriod } from '../../../core/metering/usage-periods.ts';
import type { UsageRecord } from '../../../core/metering/usage.ts';
import { dateTime, dateTimeOut, EXAMPLE_TIME, isoOrNull, numberOrDecimalText, queryInt } from './common.ts';
import { SummaryQuery } from './billing.ts';

const exactDecimalOut = (description: string) => z.string().meta({ description: `${description} Exact decimal text, e.g. "1.5" or "0.000125".` });

/**
 * Whether `a` is a later moment than `b`. The object's check runs even when a field failed to parse (zod then
 * hands over the raw text): only two parsed dates compare.
 */
const after = (a: unknown, b: unknown): boolean => a instanceof Date && b instanceof Date && a.getTime() > b.getTime();

/** A quantity sent as a number or a decimal string, read exactly into its canonical text. */
const quantity = () =>
  z
    .union([z.number(), z.string()])
    .transform((value, ctx) => {
      const parsed = parseQuantity(value);
      if (!parsed.ok) {
        ctx.addIssue({ code: 'custom', message: parsed.reason });
        return z.NEVER;
      }
      return parsed.text;
    })
    .meta({
      description: 'How much was used, in the kind\'s unit: > 0, at most 1000000000, at most 6 decimals; a number or a decimal string ("0.25").',
      ...numberOrDecimalText({ max: 1e9, decimals: 6, example: '0.25' }),
    });

export const UsageIngest = z
  .strictObject({
    resource_kind: z.string().min(1).max(64).meta({ description: 'A kind of the price list (METERED_PRICES); an unknown kind is 422 naming the known ones.', examples: ['gpu_seconds'] }),
    quantity: quantity(),
    idempotency_key: z.string().min(1).max(200).optional().meta({ description: 'Retry with the same key and body to get the same record, never a second one.' }),
    started_at: dateTime().optional().meta({ description: 'When the usage began; default ended_at, else the time of ingestion. Summaries bucket by it.' }),
    ended_at: dateTime().optional().meta({ description: 'When it ended; not before started_at.' }),
    reference: z.string().trim().max(200).optional().meta({ description: 'What it was about, in your terms (a job id...).' }),
  })
  .refine((body) => !after(body.started_at, body.ended_at), {
    path: ['ended_at'],
    message: 'must not be before started_at',
  })
  .meta({
    id: 'UsageIngest',
    examples: [{ resource_kind: 'gpu_seconds', quantity: '3600', idempotency_key: 'job-8812-gpu', started_at: EXAMPLE_TIME, ended_at: EXAMPLE_TIME, reference: 'job 8812' }],
  });

export const UsageQuery = z
  .strictObject({
    resource_kind: z.string().min(1).max(64).optional().meta({ description: 'Only records of this kind.', examples: ['gpu_seconds'] }),
    since: dateTime().optional().meta({ description: 'Records that started at or after this moment.' }),
    until: dateTime().optional().meta({ description: 'Records that started before this moment.' }),
    limit: queryInt(1, 1000, 'How many, newest first (default 500).').default(500),
  })
  .refine((query) => !after(query.since, query.until), {
    path: ['until'],
    message: 'must not be before since',
  });

export const UsageSummaryQuery = SummaryQuery;

export const UsageRecordOut = z
  .object({
    id: z.string(),
    resource_kind: z.string(),
    quantity: exactDecimalOut('In the unit.'),
    unit: z.string(),
    unit_price_usd: exactDecimalOut('USD per unit.'),
    amount_cents: z.int().meta({ description: "What this record added to its kind's total charge: one rounding up over all the kind's records, so tiny records cost 0 or 1 cent." }),
    started_at: dateTimeOut(),
    ended_at: dateTimeOut().nullable(),
    reference: z.string().nullable(),
    settled_at: dateTimeOut().nullable().meta({ description: 'When it was posted to the ledger (kind usage); null while it counts in owed_cents.' }),
    created_at: dateTimeOut(),
  })
  .meta({ id: 'UsageRecordOut' });

export const UsagePeriodOut = z
  .object({
    period_start: dateTimeOut(),
    period_end: dateTimeOut(),
    amount_cents: z.int(),
    records: z.int(),
    by_kind: z
      .record(z.string(), z.object({ quantity: exactDecimalOut('Summed, in the kind\'s unit.'), amount_cents: z.int() }).meta({ id: 'UsageKindOut' }))
      .meta({ description: 'Per resource kind.' }),
  })
  .meta({ id: 'UsagePeriodOut' });

export const SettleOut = z
  .object({
    settled: z.int().meta({ description: 'Records posted to the ledger by this call.' }),
    amount_cents: z.int().meta({ description: 'What they cost together.' }),
    remaining_owed_cents: z.int().meta({ description: "The account's owed_cents now: usage the balance could not cover, and machines past their paid time." }),
  })
  .meta({ id: 'SettleOut' });

export const usageRecordOut = (r: UsageRecord): z.input<typeof UsageRecordOut> => ({
  id: r.id,
  resource_kind: r.resourceKind,
  quantity: r.quantity,
  unit: r.unit,
  unit_price_usd: r.unitPriceUsd,
  amount_cents: r.amountCents,
  started_at: r.startedAt.toISOString(),
  ended_at: isoOrNull(r.endedAt),
  reference: r.reference,
  settled_at: isoOrNull(r.settledAt),
  created_at: r.createdAt.toISOString(),
});

export const usagePeriodOut = (p: UsagePeriod): z.input<typeof UsagePeriodOut> => ({
  period_start: p.start.toISOString(),
  period_end: p.end.toISOString(),
  amount_cents: p.amountCents,
  records: p.records,
  by_kind: Object.fromEntries(Object.entries(p.byKind).map(([kind, k]) => [kind, { quantity: k.quantity, amount_cents: k.amountCents }])),
});

export const settleOut = (s: SettleOutcome): z.input<typeof SettleOut> => ({ settled: s.settled, amount_cents: s.amountCents, remaining_owed_cents: s.remainingOwedCents });
