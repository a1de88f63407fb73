import type { Cents } from '../money.ts';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;

/** Minutes a machine ran between two moments, every started minute counted. */
export function startedMinutes(from: Date, to: Date): number {
  const ms = to.getTime() - from.getTime();
  return ms <= 0 ? 0 : Math.ceil(ms / MINUTE_MS);
}

/** The minimum charge of a rental, in minutes: the first hour; a spot machine has none. */
export const ON_DEMAND_MINIMUM_MINUTES = 60;
export const SPOT_MINIMUM_MINUTES = 0;

/**
 * What a rental costs in total for running `minutes`: ceil(rate * max(minimum, minutes) / 60). The minimum is
 * the instance's (the first hour on demand, none for spot). Every charge and refund of an instance is the
 * difference between this total at two moments, so the sum of an instance's ledger entries always equals it.
 */
export function costForMinutes(rateCentsPerHour: Cents, minutes: number, minimumMinutes: number = ON_DEMAND_MINIMUM_MINUTES): Cents {
  if (!Number.isSafeInteger(rateCentsPerHour) || rateCentsPerHour < 0) throw new RangeError(`rate must be whole cents >= 0, got ${rateCentsPerHour}`);
  if (!Number.isSafeInteger(minutes) || minutes < 0) throw new RangeError(`minutes must be a whole number >= 0, got ${minutes}`);
  if (!Number.isSafeInteger(minimumMinutes) || minimumMinutes < 0) throw new RangeError(`minimum must be a whole number of minutes >= 0, got ${minimumMinutes}`);
  const billed = BigInt(Math.max(minimumMinutes, minutes));
  return Number((BigInt(rateCentsPerHour) * billed + 59n) / 60n);
}

/** The cost of a rental that started at `start` and is paid (or ran) up to `until`. */
export const costUntil = (rateCentsPerHour: Cents, start: Date, until: Date, minimumMinutes: number = ON_DEMAND_MINIMUM_MINUTES): Cents =>
  costForMinutes(rateCentsPerHour, startedMinutes(start, until), minimumMinutes);

/** What an instance costs up to `until`, by its own rate and minimum. */
export const instanceCostUntil = (instance: { rateCentsPerHour: Cents; createdAt: Date; minimumMinutes: number }, until: Date): Cents =>
  costUntil(instance.rateCentsPerHour, instance.createdAt, until, instance.minimumMinutes);

/**
 * The next moment a running rental is paid up to, from `paidUntil`: one hour on, or its removal time
 * when that comes first (the last block is charged pro rata, by the started minute).
 */
export function nextBoundary(paidUntil: Date, removalAt: Date | null): Date {
  const hourOn = new Date(paidUntil.getTime() + HOUR_MS);
  return removalAt && removalAt.getTime() < hourOn.getTime() ? removalAt : hourOn;
}

/** The earlier of two optional moments. */
export const earliest = (a: Date | null, b: Date | null): Date | null => (a && b ? (a.getTime() <= b.getTime() ? a : b) : (a ?? b));
