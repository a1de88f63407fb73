import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { budgetView, dueAlerts, lineReached, limitReached, monthStart, nextMonthStart, percentSpent, rearmed, type BudgetStanding } from '../../core/billing/budgets/budget.ts';

const monthly = fc.integer({ min: 1, max: 100_000_000 });
const spent = fc.integer({ min: 0, max: 1_000_000_000 });
const percents = fc.uniqueArray(fc.integer({ min: 1, max: 100 }), { maxLength: 10 }).map((list) => list.sort((a, b) => a - b));

const standing = (monthlyCents: number, spentCents: number, alertPercents: number[], toldPercents: number[]): BudgetStanding => ({
  budget: { tenantId: 'ten_x', monthlyCents, alertPercents, stopAtLimit: true, updatedAt: new Date(0) },
  spentCents,
  toldPercents,
});

describe('the lines of a monthly budget (docs/decisions.md, "Monthly budgets")', () => {
  it('a percent is reached exactly when spent / monthly >= percent / 100; the percent shown is that ratio rounded down', () => {
    fc.assert(
      fc.property(monthly, spent, fc.integer({ min: 1, max: 100 }), (m, s, p) => {
        expect(lineReached(p, s, m)).toBe(s * 100 >= p * m);
        // the shown percent never disagrees with a line: reached lines are at or under it, the others above
        expect(lineReached(p, s, m)).toBe(percentSpent(s, m) >= p);
        expect(limitReached(s, m)).toBe(lineReached(100, s, m));
      }),
    );
  });

  it('a charge tells each reached percent not told yet, once: telling what it told leaves nothing due', () => {
    fc.assert(
      fc.property(monthly, spent, percents, fc.array(fc.integer({ min: 1, max: 100 })), (m, s, alerts, told) => {
        const due = dueAlerts(standing(m, s, alerts, told));
        for (const p of due) expect(alerts.includes(p) && !told.includes(p) && lineReached(p, s, m)).toBe(true);
        expect(dueAlerts(standing(m, s, alerts, [...told, ...due]))).toEqual([]);
        // spend only grows: more of it never un-tells a percent, and makes every earlier due percent due or told
        expect(dueAlerts(standing(m, s + 1, alerts, told))).toEqual(expect.arrayContaining(due));
      }),
    );
  });

  it('a new budget re-arms exactly the told percents it leaves unreached; next_alert_percent is the lowest untold', () => {
    fc.assert(
      fc.property(monthly, monthly, spent, percents, (before, after, s, alerts) => {
        const told = dueAlerts(standing(before, s, alerts, []));
        const again = rearmed(told, s, after);
        expect(again.every((p) => told.includes(p) && !lineReached(p, s, after))).toBe(true);
        expect(told.filter((p) => !again.includes(p)).every((p) => lineReached(p, s, after))).toBe(true);
        if (after >= before) expect(again).toEqual(told.filter((p) => !lineReached(p, s, after)));
        const left = told.filter((p) => !again.includes(p));
        expect(budgetView(standing(after, s, alerts, left)).nextAlertPercent).toBe(alerts.find((p) => !left.includes(p)) ?? null);
      }),
    );
  });

  it('a month is the calendar month in UTC', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }), (at) => {
        const start = monthStart(at);
        expect(start.getTime()).toBeLessThanOrEqual(at.getTime());
        expect(nextMonthStart(at).getTime()).toBeGreaterThan(at.getTime());
        expect(start.toISOString().slice(0, 7)).toBe(at.toISOString().slice(0, 7));
        expect(start.toISOString().slice(8)).toBe('01T00:00:00.000Z');
      }),
    );
  });
});
