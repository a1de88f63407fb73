import { formatUsd } from '../../money.ts';
import type { UnitOfWork } from '../../ports/storage.ts';
import { limitReached, monthName, monthStart, nextMonthStart } from './budget.ts';

/**
 * Why a budget pause cannot be lifted yet, or null when it can: in a month after the one it paused in, once the
 * budget is above this month's spend, or once there is no budget. The caller holds the account's lock.
 */
export async function budgetStillSpent(uow: UnitOfWork, tenantId: string, pausedAt: Date, now: Date): Promise<string | null> {
  const month = monthStart(now);
  if (month.getTime() > monthStart(pausedAt).getTime()) return null;
  const budget = await uow.budgets.get(tenantId);
  if (!budget) return null;
  const spentCents = await uow.budgets.spent(tenantId, month);
  if (!limitReached(spentCents, budget.monthlyCents)) return null;
  return (
    `renting stopped at the monthly budget: ${formatUsd(spentCents)} USD charged in ${monthName(month)} of ${formatUsd(budget.monthlyCents)} USD; ` +
    `raise the budget above the spend (PUT /v1/billing/budget) or resume from ${nextMonthStart(now).toISOString()}`
  );
}
