/**
 * Arithmetic on exact decimal USD text ("0.3616", "12"), done on scaled BigInts so no binary float rounds a
 * price: what spot prices and bids need (a spot price may be a minimum bid plus storage, a bid may be per
 * GPU).
 */

const PLAIN = /^(\d+)(?:\.(\d+))?$/;

interface Scaled {
  digits: bigint;
  scale: number;
}

function scaled(text: string): Scaled {
  const match = PLAIN.exec(text);
  if (!match) throw new RangeError(`not a plain decimal: "${text}"`);
  const fraction = match[2] ?? '';
  return { digits: BigInt(match[1]! + fraction), scale: fraction.length };
}

const atScale = (value: Scaled, scale: number): bigint => value.digits * 10n ** BigInt(scale - value.scale);

/** The shortest text of digits / 10^scale: no trailing zeros, no leading ones. */
function text(digits: bigint, scale: number): string {
  const padded = digits.toString().padStart(scale + 1, '0');
  const whole = padded.slice(0, padded.length - scale).replace(/^0+(?=\d)/, '');
  const fraction = padded.slice(padded.length - scale).replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}

export const isPlainDecimal = (value: string): boolean => PLAIN.test(value);

export function addDecimal(a: string, b: string): string {
  const x = scaled(a);
  const y = scaled(b);
  const scale = Math.max(x.scale, y.scale);
  return text(atScale(x, scale) + atScale(y, scale), scale);
}

/** a - b, or null when it would be negative. */
export function subtractDecimal(a: string, b: string): string | null {
  const x = scaled(a);
  const y = scaled(b);
  const scale = Math.max(x.scale, y.scale);
  const difference = atScale(x, scale) - atScale(y, scale);
  return difference < 0n ? null : text(difference, scale);
}

/** Negative, zero or positive as a is under, at or over b. */
export function compareDecimal(a: string, b: string): number {
  const x = scaled(a);
  const y = scaled(b);
  const scale = Math.max(x.scale, y.scale);
  const difference = atScale(x, scale) - atScale(y, scale);
  return difference < 0n ? -1 : difference > 0n ? 1 : 0;
}

/** a / divisor rounded down to `places` decimals (exact when the quotient has no more). */
export function divideDecimalDown(a: string, divisor: number, places: number): string {
  if (!Number.isSafeInteger(divisor) || divisor < 1) throw new RangeError(`cannot divide by ${divisor}`);
  const x = scaled(a);
  return text((x.digits * 10n ** BigInt(places)) / (10n ** BigInt(x.scale) * BigInt(divisor)), places);
}

/** a * factor, exact (a whole factor: hours in a month, GPUs in a machine). */
export function multiplyDecimal(a: string, factor: number): string {
  if (!Number.isSafeInteger(factor) || factor < 0) throw new RangeError(`cannot multiply by ${factor}`);
  const x = scaled(a);
  return text(x.digits * BigInt(factor), x.scale);
}
