/**
 * Storage prices as exact decimal text. Hours in a billing month: 730 (8,760 / 12), the convention cloud
 * price lists use for a GB-month.
 */
export const HOURS_PER_MONTH = 730;
const MICRO = 1_000_000n;
const PRICE = /^(\d{1,9})(?:\.(\d{1,12}))?$/;

/** An exact decimal USD price as integer units of 1e-12 USD, or null when it is not one. */
function picoUsd(text: string): bigint | null {
  const match = PRICE.exec(text);
  if (!match) return null;
  return BigInt(match[1]!) * 10n ** 12n + BigInt((match[2] ?? '').padEnd(12, '0'));
}

const formatMicro = (micro: bigint): string => {
  const whole = micro / MICRO;
  const fraction = (micro % MICRO).toString().padStart(6, '0').replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : `${whole}`;
};

/** The GB-hour price billed for a GB-month price: monthly / 730, rounded up to 6 decimals (exact). */
export function hourlyPrice(monthlyUsd: string): string {
  const pico = picoUsd(monthlyUsd);
  if (pico === null) throw new RangeError(`not an exact decimal price: ${monthlyUsd}`);
  const denominator = BigInt(HOURS_PER_MONTH) * 1_000_000n; // pico -> micro, then / 730
  return formatMicro((pico + denominator - 1n) / denominator);
}

/** The GB-month price shown in whole cents, rounded up (display only; billing uses the hourly price). */
export function monthlyCents(monthlyUsd: string): number {
  const pico = picoUsd(monthlyUsd);
  if (pico === null) throw new RangeError(`not an exact decimal price: ${monthlyUsd}`);
  const perCent = 10n ** 10n;
  return Number((pico + perCent - 1n) / perCent);
}

export const isPrice = (text: string): boolean => picoUsd(text) !== null;
