/**
 * Sandbox prices are held as integer ten-thousandths of a dollar, so per-GPU price times GPU count is
 * integer arithmetic and the text we hand out is exact (at most 4 decimals, no float ever rounds it).
 */
export const PRICE_SCALE = 10_000;

const EXACT = /^(\d+)(?:\.(\d{1,4}))?$/;

/** 20000 -> "2.00", 3500 -> "0.35", 12345 -> "1.2345": trailing zeros trimmed, at least 2 decimals. */
export function formatPriceUnits(units: number): string {
  if (!Number.isSafeInteger(units) || units < 0) throw new RangeError(`not a price in 1/10000 USD: ${units}`);
  const whole = Math.trunc(units / PRICE_SCALE);
  let fraction = String(units % PRICE_SCALE).padStart(4, '0');
  while (fraction.length > 2 && fraction.endsWith('0')) fraction = fraction.slice(0, -1);
  return `${whole}.${fraction}`;
}

/** "1.2345" -> 12345; null for anything that is not a plain decimal with at most 4 decimals. */
export function parsePriceUnits(text: string): number | null {
  const match = EXACT.exec(text.trim());
  if (!match) return null;
  const [, whole = '0', fraction = ''] = match;
  const units = Number(whole) * PRICE_SCALE + Number(fraction.padEnd(4, '0'));
  return Number.isSafeInteger(units) ? units : null;
}
