import { z } from 'zod';
import { parseUsd, type UsdParseOptions } from '../../../core/money.ts';

export const ErrorOut = z
  .object({ detail: z.string().meta({ description: 'What went wrong and what to change.' }) })
  .meta({ id: 'ErrorOut' });

export const ValidationErrorOut = z
  .object({
    detail: z.string(),
    errors: z.array(
      z.object({
        loc: z.array(z.union([z.string(), z.number()])).meta({ description: 'Where: ["body", "field"], ["query", "name"]...' }),
        msg: z.string(),
      }),
    ),
  })
  .meta({ id: 'ValidationErrorOut' });

/**
 * A USD amount sent as a number or a decimal string, parsed exactly into integer cents.
 * More than two decimals, non-numbers and (unless allowed) zero or negatives are refused.
 */
export const usdAmount = (options: UsdParseOptions = {}) =>
  z
    .union([z.number(), z.string()])
    .transform((value, ctx) => {
      const parsed = parseUsd(value, options);
      if (!parsed.ok) {
        ctx.addIssue({ code: 'custom', message: parsed.reason });
        return z.NEVER;
      }
      return parsed.cents;
    })
    .meta({ description: 'USD, as a number or a decimal string with at most 2 decimals, e.g. 19.99 or "19.99".' });

/** ISO 8601 date-time with an offset, read into a Date. */
export const dateTime = () =>
  z.iso
    .datetime({ offset: true, message: 'must be an ISO 8601 date-time such as 2026-12-31T23:59:00Z' })
    .transform((text) => new Date(text));

/** A timestamp in an answer: ISO 8601 text, documented as date-time. */
export const dateTimeOut = () => z.string().meta({ format: 'date-time' });

export const isoOrNull = (date: Date | null): string | null => (date ? date.toISOString() : null);

export const resourceId = (prefix: string) =>
  z
    .string()
    .max(64)
    .regex(new RegExp(`^${prefix}_[a-z0-9]+$`), `must be an id like ${prefix}_...`);

/**
 * Query values arrive as text and are parsed here; /openapi.json should state the type a caller
 * writes (integer, number, boolean), not the text pattern used to read it.
 */
export const documentedAs = (schema: Record<string, unknown>) => ({
  override: ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
    const description = jsonSchema.description;
    for (const key of Object.keys(jsonSchema)) delete jsonSchema[key];
    Object.assign(jsonSchema, schema, description === undefined ? {} : { description });
  },
});

/** A whole number sent as query text, documented as an integer. */
export const queryInt = (min: number, max: number, description: string) =>
  z
    .string()
    .regex(/^\s*\d+\s*$/, `must be a whole number from ${min} to ${max}`)
    .transform(Number)
    .pipe(z.int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`))
    .meta({ description, ...documentedAs({ type: 'integer', minimum: min, maximum: max }) });

