import type { Granularity } from '../billing/periods.ts';
import type { Cents } from '../money.ts';
import type { UsagePeriodRow } from './usage.ts';

export interface UsagePeriod {
  start: Date;
  end: Date;
  amountCents: Cents;
  records: number;
  byKind: Record<string, { quantity: string; amountCents: Cents }>;
}

const DAY_MS = 86_400_000;

/** Where the period that starts at `start` ends: the next UTC month, or 7 days on for an ISO week. */
const periodEnd = (start: Date, granularity: Granularity): Date =>
  granularity === 'monthly' ? new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1)) : new Date(start.getTime() + 7 * DAY_MS);

/** Per-kind sums (newest period first, as the storage answers them) gathered into periods, newest first. */
export function usagePeriods(rows: readonly UsagePeriodRow[], granularity: Granularity, limit: number): UsagePeriod[] {
  const periods = new Map<number, UsagePeriod>();
  for (const row of rows) {
    const key = row.periodStart.getTime();
    let period = periods.get(key);
    if (!period) {
      period = { start: row.periodStart, end: periodEnd(row.periodStart, granularity), amountCents: 0, records: 0, byKind: {} };
      periods.set(key, period);
    }
    period.amountCents += row.amountCents;
    period.records += row.records;
    period.byKind[row.resourceKind] = { quantity: row.quantity, amountCents: row.amountCents };
  }
  return [...periods.values()].sort((a, b) => b.start.getTime() - a.start.getTime()).slice(0, limit);
}
