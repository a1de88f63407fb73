/** Money and time for people: dollars and cents from integer cents (no float ever), times in their zone. */

// US grouping whatever the person's locale: "$1.234.56" (a German grouping before the US decimal point) misleads
const grouping = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** 123456 -> "$1,234.56"; -5 -> "-$0.05". Integer arithmetic only. */
export function usd(cents: number): string {
  if (!Number.isSafeInteger(cents)) return '—';
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  const dollars = (abs - (abs % 100)) / 100;
  return `${sign}$${grouping.format(dollars)}.${String(abs % 100).padStart(2, '0')}`;
}

/** 123456 -> "1234.56": an amount as a form's field holds it and the API reads it (no $, no grouping). */
export function dollarsText(cents: number): string {
  const abs = Math.abs(cents);
  return `${cents < 0 ? '-' : ''}${(abs - (abs % 100)) / 100}.${String(abs % 100).padStart(2, '0')}`;
}

/** What a dollar field accepts ("12", "12.5", "12.50"), as the API does (no leading zeros); sent as text. */
export const DOLLARS = /^(0|[1-9]\d{0,8})(\.\d{1,2})?$/;

/** "12.5" -> 1250: a text DOLLARS accepts as integer cents (no float), as the API parses it. */
export function centsOfDollars(text: string): number {
  const [whole = '0', fraction = ''] = text.split('.');
  return Number(whole) * 100 + Number(fraction.padEnd(2, '0'));
}

/** "1 machine", "3 machines". */
export const count = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

const absolute = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZoneName: 'short' });
const relativeFormat = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  return absolute.format(new Date(iso));
}

const STEPS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
  ['second', 1_000],
];

/** "in 3 hours", "5 minutes ago". */
export function relative(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '';
  const diff = Date.parse(iso) - now;
  for (const [unit, ms] of STEPS) if (Math.abs(diff) >= ms || unit === 'second') return relativeFormat.format(Math.round(diff / ms), unit);
  return '';
}

/** A countdown "2d 03:04:05" to a moment (zero once passed). */
export function countdown(iso: string, now = Date.now()): string {
  let s = Math.max(0, Math.floor((Date.parse(iso) - now) / 1000));
  const d = Math.floor(s / 86_400);
  s -= d * 86_400;
  const hms = [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60].map((n) => String(n).padStart(2, '0')).join(':');
  return d ? `${d}d ${hms}` : hms;
}

/** The local calendar day of a moment, YYYY-MM-DD, for the spend chart. */
export function localDay(iso: string): string {
  const d = new Date(iso);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}
