import { formatUsd, type Cents } from '../../money.ts';

/**
 * A tenant's monthly budget (docs/decisions.md, "Monthly budgets"): what the ledger may charge in a calendar
 * month (UTC) before the alert lines are told and, with `stopAtLimit`, renting stops.
 */
export interface MonthlyBudget {
  tenantId: string;
  monthlyCents: Cents;
  /** Distinct, 1..100, ascending. */
  alertPercents: number[];
  stopAtLimit: boolean;
  updatedAt: Date;
}

/** A budget and its month: what was charged and which alert percents were told. */
export interface BudgetStanding {
  budget: MonthlyBudget;
  spentCents: Cents;
  /** Percents told this month (their alert went out); a raise of the budget re-arms those above the spend. */
  toldPercents: number[];
}

/** What GET /v1/billing/budget answers. */
export interface BudgetView {
  monthlyCents: Cents;
  spentCents: Cents;
  /** The whole percent of the budget spent, rounded down: 100 once it is all spent, above 100 past it. */
  percent: number;
  alertPercents: number[];
  /** The lowest alert percent not told this month; null: all told (or none set). */
  nextAlertPercent: number | null;
  stopAtLimit: boolean;
}

/** The first moment of the calendar month (UTC) holding `at`. */
export const monthStart = (at: Date): Date => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));

/** The first moment of the next calendar month (UTC). */
export const nextMonthStart = (at: Date): Date => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));

/** "2026-11". */
export const monthName = (month: Date): string => month.toISOString().slice(0, 7);

/**
 * Whether `percent` of the budget is spent: spent / monthly >= percent / 100, compared exactly in integers (the one
 * rule of a line; no rounding decides an alert).
 */
export const lineReached = (percent: number, spentCents: Cents, monthlyCents: Cents): boolean =>
  BigInt(spentCents) * 100n >= BigInt(percent) * BigInt(monthlyCents);

/** The whole percent spent, rounded down (shown; lineReached decides). */
export const percentSpent = (spentCents: Cents, monthlyCents: Cents): number => Number((BigInt(spentCents) * 100n) / BigInt(monthlyCents));

/** Whether the whole budget is spent: what stops renting when the budget says so. */
export const limitReached = (spentCents: Cents, monthlyCents: Cents): boolean => spentCents >= monthlyCents;

/** The alert percents a charge makes due: reached and not told this month, lowest first. */
export const dueAlerts = (standing: BudgetStanding): number[] =>
  standing.budget.alertPercents.filter((p) => !standing.toldPercents.includes(p) && lineReached(p, standing.spentCents, standing.budget.monthlyCents));

/** Told percents that a new budget leaves unreached: they are re-armed (told again when a charge reaches them). */
export const rearmed = (toldPercents: readonly number[], spentCents: Cents, monthlyCents: Cents): number[] =>
  toldPercents.filter((p) => !lineReached(p, spentCents, monthlyCents));

export const budgetView = ({ budget, spentCents, toldPercents }: BudgetStanding): BudgetView => ({
  monthlyCents: budget.monthlyCents,
  spentCents,
  percent: percentSpent(spentCents, budget.monthlyCents),
  alertPercents: budget.alertPercents,
  nextAlertPercent: budget.alertPercents.find((p) => !toldPercents.includes(p)) ?? null,
  stopAtLimit: budget.stopAtLimit,
});

/** Why renting paused, kept with the pause. */
export const budgetPauseReason = (monthlyCents: Cents, spentCents: Cents, month: Date): string =>
  `the monthly budget of ${formatUsd(monthlyCents)} USD is spent (${formatUsd(spentCents)} USD charged in ${monthName(month)}); ` +
  'raise it above the spend (PUT /v1/billing/budget) or wait for the next month, then POST /v1/billing/resume';
