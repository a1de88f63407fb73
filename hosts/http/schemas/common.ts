import { z } from 'zod';
import { parseUsd, type UsdParseOptions } from '../../../core/money.ts';

export const ErrorOut = z
  .object({
    detail: z.string().meta({ description: 'What went wrong and what to change.' }),
    code: z.enum(['PRICE_CHANGED']).optional().meta({ description: "Where a client acts on the kind of refusal: PRICE_CHANGED (409), a quote's node costs more now; quote again." }),
  })
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
 * The text of an amount with at most `decimals` decimals and no leading zeros, whose whole part has at most as
 * many digits as `max`: what a caller must send (the server checks the exact bounds and says why).
 */
export const decimalPattern = (max: number, decimals: number, negative = false): string =>
  `^${negative ? '-?' : ''}(0|[1-9]\\d{0,${String(Math.floor(max)).length - 1}})(\\.\\d{1,${decimals}})?$`;

/**
 * A number or decimal text above zero (or from zero), as one schema per type: an example and the rules each spelling
 * has. The number says its decimals too (`multipleOf`, e.g. 0.01), so a generated client refuses what the server
 * would (12.345 is a 422); a validator reads it on the decimal value, not as floating-point division.
 */
export const numberOrDecimalText = (rules: { max: number; decimals: number; allowZero?: boolean; allowNegative?: boolean; example: string }) =>
  documentedAs({
    anyOf: [
      {
        type: 'number',
        ...(rules.allowNegative ? {} : rules.allowZero ? { minimum: 0 } : { exclusiveMinimum: 0 }),
        maximum: rules.max,
        multipleOf: Number(`1e-${rules.decimals}`),
      },
      { type: 'string', pattern: decimalPattern(rules.max, rules.decimals, rules.allowNegative), maxLength: 32 },
    ],
    examples: [rules.example],
  });

/**
 * A USD amount sent as a number or a decimal string, parsed exactly into integer cents.
 * More than two decimals, non-numbers and (unless allowed) zero or negatives are refused.
 */
export const usdAmount = (options: UsdParseOptions = {}, example = '25.00') =>
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
    .meta({
      description: 'USD, as a number or a decimal string with at most 2 decimals, e.g. 19.99 or "19.99".',
      ...numberOrDecimalText({ max: (options.maxCents ?? 1e15) / 100, decimals: 2, ...options, example }),
    });

/** An example time in the documents: test/api/openapi-examples.test.ts sends each with a real time instead. */
export const EXAMPLE_TIME = '2026-12-01T09:00:00Z';

/** ISO 8601 date-time with an offset, read into a Date. */
export const dateTime = (example = EXAMPLE_TIME) =>
  z.iso
    .datetime({ offset: true, message: 'must be an ISO 8601 date-time such as 2026-12-31T23:59:00Z' })
    // on the text: a query or body is documented as what is sent, before the transform
    .meta({ examples: [example] })
    .transform((text) => new Date(text));

/** A timestamp in an answer: ISO 8601 text, documented as date-time. */
export const dateTimeOut = () => z.string().meta({ format: 'date-time' });

export const isoOrNull = (date: Date | null): string | null => (date ? date.toISOString() : null);

/** Who saved an SSH key, image, template or webhook endpoint: what a credential that is not root may change (acts-on.ts). */
export const madeByTokenIdOut = () =>
  z.string().nullable().meta({
    description:
      'The token that saved it (see GET /v1/tokens). A credential that is not root changes or deletes only what it, or a token under it, saved (403 MADE_BY_ANOTHER otherwise); null: saved before this was kept, so only root does.',
  });

/** An id in the documents' examples: the prefix says its kind, the rest is what ids look like (16 base32 letters). */
export const exampleId = (prefix: string): string => `${prefix}_9q4m2xk7c3rwh8vt`;

export const resourceId = (prefix: string) =>
  z
    .string()
    .max(64)
    .regex(new RegExp(`^${prefix}_[a-z0-9]+$`), `must be an id like ${prefix}_...`)
    .meta({ examples: [exampleId(prefix)] });

/**
 * Query values arrive as text and are parsed here; /openapi.json should state the type a caller
 * writes (integer, number, boolean), not the text pattern used to read it.
 */
export const documentedAs = (schema: Record<string, unknown>) => ({
  override: ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
    const { description, examples } = jsonSchema;
    for (const key of Object.keys(jsonSchema)) delete jsonSchema[key];
    Object.assign(jsonSchema, { examples }, schema, description === undefined ? {} : { description });
    if (jsonSchema.examples === undefined) delete jsonSchema.examples;
  },
});

/** A whole number sent as query text, documented as an integer. */
export const queryInt = (min: number, max: number, description: string, example = Math.min(max, Math.max(min, 10))) =>
  z
    .string()
    .regex(/^\s*\d+\s*$/, `must be a whole number from ${min} to ${max}`)
    .transform(Number)
    .pipe(z.int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`))
    .meta({ description, ...documentedAs({ type: 'integer', minimum: min, maximum: max, examples: [example] }) });

