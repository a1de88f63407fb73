import type { Cents } from '../money.ts';

/**
 * One rounding, ever. Per tenant and kind the total charged is ceil(the exact sum of
 * quantity x unit price over every record so far), in cents; a record's amount is the increase it causes.
 * Exact values are whole numbers of 1e-12 USD: a quantity and a unit price each have at most 6 decimals,
 * so their product is exact at 12. The storage keeps the same sum in NUMERIC and applies this same rule in
 * SQL (adapters/storage/stores/metering-usage-store.ts); property tests hold both to it.
 */
const PICO_PER_CENT = 10_000_000_000n;

/** quantity x unit price, exactly, in 1e-12 USD. */
export const exactCost = (quantityMicros: bigint, unitPriceMicros: bigint): bigint => quantityMicros * unitPriceMicros;

/** What a running exact total has cost so far, in whole cents: rounded up, once. */
export function chargedCents(totalPico: bigint): bigint {
  if (totalPico < 0n) throw new RangeError('a metered total is never negative');
  return (totalPico + PICO_PER_CENT - 1n) / PICO_PER_CENT;
}

/** The next record of a (tenant, kind): the total after it, and what it adds to what was charged. */
export function meter(totalBeforePico: bigint, quantityMicros: bigint, unitPriceMicros: bigint): { totalAfterPico: bigint; amountCents: Cents } {
  const totalAfterPico = totalBeforePico + exactCost(quantityMicros, unitPriceMicros);
  return { totalAfterPico, amountCents: Number(chargedCents(totalAfterPico) - chargedCents(totalBeforePico)) };
}
