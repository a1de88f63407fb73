import type { BudgetAlert } from '../ports/budget-storage.ts';
import type { NewEvent } from './event.ts';

/** budget.threshold_reached: a charge reached one of the alert percents of the month's budget. */
export const budgetThresholdEvent = (alert: BudgetAlert): NewEvent => ({
  tenantId: alert.tenantId,
  type: 'budget.threshold_reached',
  data: { percent: alert.percent, monthly_cents: alert.monthlyCents, spent_cents: alert.spentCents },
  at: alert.toldAt,
});
