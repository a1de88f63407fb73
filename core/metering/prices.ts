import { MICROS_PER_UNIT, parseDecimal } from './decimal.ts';

/** Built in: a volume's storage, metered hourly by the sweep at that volume's own price per GB-hour. */
export const VOLUME_STORAGE = 'volume_storage';
export const VOLUME_STORAGE_UNIT = 'GB-hour';

export const KIND_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;
/** What a unit may be called: printable ASCII, 1 to 32 characters, no space at either end ("GB-hour", "1k tokens"). */
const UNIT_PATTERN = /^[\x21-\x7e](?:[\x20-\x7e]{0,30}[\x21-\x7e])?$/;
/** 1,000 USD per unit at most: with quantities up to 1e9, one record stays a safe integer of cents. */
export const MAX_UNIT_PRICE_MICROS = 1_000n * MICROS_PER_UNIT;

export interface MeteredPrice {
  unit: string;
  /** Exact decimal text, canonical ("0.000125"). */
  usdPerUnit: string;
  usdPerUnitMicros: bigint;
}

/** The kinds a tenant's services may report, and their prices (METERED_PRICES). */
export type PriceList = ReadonlyMap<string, MeteredPrice>;

export const parseUnitPrice = (input: unknown) => parseDecimal(input, { maxMicros: MAX_UNIT_PRICE_MICROS });

/**
 * A price list from its JSON form: `{ "<kind>": { "unit": "...", "usd_per_unit": "0.0001" } }`. Every
 * problem is reported at once, by kind, so one start-up names all of them.
 */
export function parsePriceList(raw: unknown): { ok: true; prices: PriceList } | { ok: false; problems: string[] } {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return { ok: false, problems: ['must be a JSON object of kind -> {"unit": "...", "usd_per_unit": "..."}'] };
  }
  const prices = new Map<string, MeteredPrice>();
  const problems: string[] = [];
  for (const [kind, entry] of Object.entries(raw)) {
    if (!KIND_PATTERN.test(kind)) {
      problems.push(`kind "${kind.slice(0, 80)}": must match [a-z][a-z0-9_]{0,63}`);
      continue;
    }
    if (kind === VOLUME_STORAGE) {
      problems.push(`kind "${kind}" is built in: each volume's storage is billed at that volume's own price; remove it`);
      continue;
    }
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
      problems.push(`kind "${kind}": must be an object {"unit": "...", "usd_per_unit": "..."}`);
      continue;
    }
    const { unit, usd_per_unit: price, ...rest } = entry as Record<string, unknown>;
    const extra = Object.keys(rest);
    if (extra.length > 0) problems.push(`kind "${kind}": unknown field(s) ${extra.join(', ')}; only unit and usd_per_unit`);
    if (typeof unit !== 'string' || !UNIT_PATTERN.test(unit)) problems.push(`kind "${kind}": unit must be a name of 1 to 32 printable characters, e.g. "GB-hour"`);
    const parsed = parseUnitPrice(price);
    if (!parsed.ok) problems.push(`kind "${kind}": usd_per_unit ${parsed.reason}`);
    if (typeof unit === 'string' && UNIT_PATTERN.test(unit) && parsed.ok && extra.length === 0) {
      prices.set(kind, { unit, usdPerUnit: parsed.text, usdPerUnitMicros: parsed.micros });
    }
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, prices };
}
