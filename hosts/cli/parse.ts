import { InvalidArgumentError } from 'commander';

/** Argument parsers: a bad value is a usage error (exit 2) before any request is sent. */

export const integer = (min: number, max: number) => (text: string): number => {
  if (!/^\d+$/.test(text.trim())) throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}`);
  const value = Number(text);
  if (value < min || value > max) throw new InvalidArgumentError(`must be from ${min} to ${max}`);
  return value;
};

/** A decimal kept as the text typed (the query string carries text anyway). */
export const decimal = (text: string): string => {
  if (!/^\d+(\.\d+)?$/.test(text.trim())) throw new InvalidArgumentError('must be a number, e.g. 24 or 0.5');
  return text.trim();
};

/** USD as the user typed it, kept as text: the API parses it exactly into cents, no float on the way. */
export const usd = (text: string): string => {
  const trimmed = text.trim().replace(/^\$/, '');
  if (!/^\d+(\.\d+)?$/.test(trimmed)) throw new InvalidArgumentError('must be a USD amount, e.g. 25 or 19.99');
  return trimmed;
};

/** A span in whole minutes: "30m", "2h", "1h30m", or a bare number of minutes ("45"). */
export const minutes = (min: number, max: number) => (text: string): number => {
  const trimmed = text.trim();
  const span = /^(?:(\d+)h)?\s*(?:(\d+)m?)?$/i.exec(trimmed);
  if (!trimmed || !span || (span[1] === undefined && span[2] === undefined)) {
    throw new InvalidArgumentError(`must be minutes like 30m, 2h, 1h30m or 45 (minutes), from ${min} to ${max} minutes`);
  }
  const value = Number(span[1] ?? 0) * 60 + Number(span[2] ?? 0);
  if (value < min || value > max) throw new InvalidArgumentError(`must be from ${min} to ${max} minutes`);
  return value;
};

export const list = (text: string): string[] =>
  text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

const DURATION = /^\+?(?:(\d+)d)?\s*(?:(\d+)h)?\s*(?:(\d+)m)?$/i;

/**
 * A moment: ISO 8601 with an offset (2026-11-24T18:00:00Z), or a span from now (2h, 90m, 1d, 1h30m, +2h).
 * Answers ISO text for the API.
 */
export function moment(text: string, now: number = Date.now()): string {
  const trimmed = text.trim();
  const span = DURATION.exec(trimmed);
  if (span && (span[1] || span[2] || span[3])) {
    const ms = (Number(span[1] ?? 0) * 24 * 60 + Number(span[2] ?? 0) * 60 + Number(span[3] ?? 0)) * 60_000;
    return new Date(now + ms).toISOString();
  }
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(trimmed) && !Number.isNaN(Date.parse(trimmed))) {
    return new Date(Date.parse(trimmed)).toISOString();
  }
  throw new InvalidArgumentError('must be a time like 2026-11-24T18:00:00Z or a span from now like 2h, 90m, 1d');
}
