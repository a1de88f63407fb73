import { MICROS_PER_UNIT, parseDecimal } from './decimal.ts';

/** A record's quantity: > 0, at most 1e9, at most 6 decimals. */
export const MAX_QUANTITY_MICROS = 1_000_000_000n * MICROS_PER_UNIT;

export const parseQuantity = (input: unknown) => parseDecimal(input, { maxMicros: MAX_QUANTITY_MICROS });
