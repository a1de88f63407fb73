/**
 * Exact decimals for metering: quantities and unit prices have at most 6 decimals, so each is held as a
 * whole number of millionths (a BigInt). A number input is read from the decimal text JavaScript prints for
 * it, so no binary float ever takes part in the value (0.1 + 0.2 arrives with 17 decimals and is refused).
 */
export const MICROS_PER_UNIT = 1_000_000n;

export interface DecimalRules {
  /** Largest accepted value, inclusive, in millionths. */
  maxMicros: bigint;
}

export type DecimalParse = { ok: true; micros: bigint; text: string } | { ok: false; reason: string };

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/** The shortest decimal text that reads back as this number; null for exponent notation and non-finite values. */
const numberText = (value: number): string | null => {
  if (!Number.isFinite(value)) return null;
  const text = String(value);
  return /e/i.test(text) ? null : text;
};

/** A positive exact decimal with at most 6 decimals, from a JSON number or a decimal string. */
export function parseDecimal(input: unknown, rules: DecimalRules): DecimalParse {
  let text: string | null;
  if (typeof input === 'number') text = numberText(input);
  else if (typeof input === 'string') text = input;
  else return { ok: false, reason: 'must be a number or a decimal string, e.g. 1.5 or "1.5"' };
  if (text === null) return { ok: false, reason: 'must be a finite number in plain decimal notation (no exponent), e.g. 0.000125' };
  if (text.startsWith('-')) return { ok: false, reason: 'must be greater than 0' };
  const match = DECIMAL.exec(text);
  if (!match) return { ok: false, reason: `"${text.length > 40 ? `${text.slice(0, 40)}…` : text}" is not a decimal number; write it like 12.5` };
  const [, whole = '0', fraction = ''] = match;
  if (whole.length > 1 && whole.startsWith('0')) return { ok: false, reason: `"${text}" has leading zeros; write it like ${text.replace(/^0+(?=\d)/, '')}` };
  if (fraction.length > 6) return { ok: false, reason: `has ${fraction.length} decimals; at most 6 are accepted` };
  if (whole.length > 16) return { ok: false, reason: `must be at most ${formatMicros(rules.maxMicros)}` };
  const micros = BigInt(whole) * MICROS_PER_UNIT + BigInt(fraction.padEnd(6, '0'));
  if (micros === 0n) return { ok: false, reason: 'must be greater than 0' };
  if (micros > rules.maxMicros) return { ok: false, reason: `must be at most ${formatMicros(rules.maxMicros)}` };
  return { ok: true, micros, text: formatMicros(micros) };
}

/** Millionths as the one canonical decimal text: no trailing zeros, no point for a whole number ("1.5", "2", "0.000001"). */
export function formatMicros(micros: bigint): string {
  const sign = micros < 0n ? '-' : '';
  const abs = micros < 0n ? -micros : micros;
  const whole = abs / MICROS_PER_UNIT;
  const fraction = (abs % MICROS_PER_UNIT).toString().padStart(6, '0').replace(/0+$/, '');
  return `${sign}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** Canonical text that came from storage (e.g. PostgreSQL's "1.500000") back into millionths. */
export function microsOf(text: string): bigint {
  const match = /^(-)?(\d+)(?:\.(\d{0,6})0*)?$/.exec(text);
  if (!match) throw new RangeError(`not an exact decimal with at most 6 decimals: ${text}`);
  const [, minus, whole = '0', fraction = ''] = match;
  const micros = BigInt(whole) * MICROS_PER_UNIT + BigInt(fraction.padEnd(6, '0'));
  return minus ? -micros : micros;
}
