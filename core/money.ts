/**
 * Money is an integer number of cents (a safe integer) everywhere inside the system.
 * USD amounts from the outside arrive as a number or a decimal string and are parsed exactly:
 * the decimal text is read digit by digit, so no binary float ever takes part in the value.
 */
export type Cents = number;

export interface UsdParseOptions {
  /** Accept 0 (default: false, amounts must be greater than zero). */
  allowZero?: boolean;
  /** Accept a leading minus sign (default: false). */
  allowNegative?: boolean;
  /** Largest accepted amount in cents, inclusive. */
  maxCents?: Cents;
}

export type UsdParseResult = { ok: true; cents: Cents } | { ok: false; reason: string };

const DECIMAL = /^(-)?(\d+)(?:\.(\d{1,2}))?$/;
/** One text per amount: "5.00" and "0.50", never "05.00"; several spellings of one amount hide typos. */
const LEADING_ZEROS = /^-?0\d/;

/** The shortest decimal text that reads back as this number (how JS prints numbers). */
const numberToDecimalText = (value: number): string | null => {
  if (!Number.isFinite(value)) return null;
  const text = String(value);
  return /e/i.test(text) ? null : text;
};

export function parseUsd(input: unknown, options: UsdParseOptions = {}): UsdParseResult {
  let text: string | null;
  if (typeof input === 'number') text = numberToDecimalText(input);
  else if (typeof input === 'string') text = input;
  else return { ok: false, reason: 'must be a USD amount given as a number or a decimal string, e.g. 19.99' };
  if (text === null) return { ok: false, reason: 'must be a finite amount in plain decimal notation, e.g. 19.99' };
  if (text !== text.trim() && text.trim() !== '') return { ok: false, reason: `has spaces around it; send "${text.trim()}" alone` };
  if (LEADING_ZEROS.test(text) && DECIMAL.test(text)) {
    return { ok: false, reason: `"${text}" has leading zeros; write it like ${text.replace(/^(-?)0+(?=\d)/, '$1')}` };
  }

  const match = DECIMAL.exec(text);
  if (!match) {
    if (/^-?\d*\.\d{3,}$/.test(text)) return { ok: false, reason: 'has more than 2 decimal places; USD amounts are exact to the cent' };
    return { ok: false, reason: `"${text}" is not a USD amount; write it like 19.99` };
  }
  const [, minus, whole = '0', fraction = ''] = match;
  if (whole.length > 13) return { ok: false, reason: 'is too large' };
  const magnitude = Number(whole) * 100 + Number(fraction.padEnd(2, '0'));
  const cents = minus && magnitude !== 0 ? -magnitude : magnitude;

  if (cents < 0 && !options.allowNegative) return { ok: false, reason: 'must not be negative' };
  if (cents === 0 && !options.allowZero) return { ok: false, reason: 'must be greater than 0' };
  if (options.maxCents !== undefined && cents > options.maxCents) {
    return { ok: false, reason: `must be at most ${formatUsd(options.maxCents)}` };
  }
  return { ok: true, cents };
}

/** Cents as a plain decimal USD string with exactly two decimals: 1999 -> "19.99", -5 -> "-0.05". */
export function formatUsd(cents: Cents): string {
  if (!Number.isSafeInteger(cents)) throw new RangeError(`not a whole number of cents: ${cents}`);
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.trunc(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

export const usd = (dollars: number): Cents => {
  const parsed = parseUsd(dollars, { allowZero: true, allowNegative: true });
  if (!parsed.ok) throw new RangeError(`usd(${dollars}) ${parsed.reason}`);
  return parsed.cents;
};
