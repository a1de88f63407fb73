import type { Cents } from '../money.ts';
import type { LedgerEntry } from './account.ts';

export type Granularity = 'monthly' | 'weekly';

export interface BillingPeriod {
  /** "2026-11" or "2026-W47" (ISO week). */
  period: string;
  start: Date;
  end: Date;
  creditsCents: Cents;
  debitsCents: Cents;
  netCents: Cents;
  entries: number;
}

const DAY_MS = 86_400_000;

/** Monday 00:00 UTC of the ISO week holding `at`, and that week's ISO year and number. */
function isoWeek(at: Date): { start: Date; year: number; week: number } {
  const day = (at.getUTCDay() + 6) % 7; // Monday = 0
  const start = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()) - day * DAY_MS);
  const thursday = new Date(start.getTime() + 3 * DAY_MS);
  const year = thursday.getUTCFullYear();
  const firstThursday = new Date(Date.UTC(year, 0, 4));
  const week1Start = firstThursday.getTime() - ((firstThursday.getUTCDay() + 6) % 7) * DAY_MS;
  return { start, year, week: 1 + Math.round((start.getTime() - week1Start) / (7 * DAY_MS)) };
}

function periodOf(at: Date, granularity: Granularity): { key: string; start: Date; end: Date; year: number } {
  if (granularity === 'monthly') {
    const year = at.getUTCFullYear();
    const month = at.getUTCMonth();
    return { key: `${year}-${String(month + 1).padStart(2, '0')}`, start: new Date(Date.UTC(year, month, 1)), end: new Date(Date.UTC(year, month + 1, 1)), year };
  }
  const { start, year, week } = isoWeek(at);
  return { key: `${year}-W${String(week).padStart(2, '0')}`, start, end: new Date(start.getTime() + 7 * DAY_MS), year };
}

/** The ledger bucketed by calendar month or ISO week (UTC), newest period first. */
export function billingPeriods(entries: readonly LedgerEntry[], granularity: Granularity, options: { year?: number; limit: number }): BillingPeriod[] {
  const periods = new Map<string, BillingPeriod>();
  for (const entry of entries) {
    const { key, start, end, year } = periodOf(entry.createdAt, granularity);
    if (options.year !== undefined && year !== options.year) continue;
    let period = periods.get(key);
    if (!period) {
      period = { period: key, start, end, creditsCents: 0, debitsCents: 0, netCents: 0, entries: 0 };
      periods.set(key, period);
    }
    if (entry.amountCents >= 0) period.creditsCents += entry.amountCents;
    else period.debitsCents -= entry.amountCents;
    period.netCents += entry.amountCents;
    period.entries++;
  }
  return [...periods.values()].sort((a, b) => b.start.getTime() - a.start.getTime()).slice(0, options.limit);
}
