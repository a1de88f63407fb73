import { invalidInput } from '../../errors.ts';
import type { Cents } from '../../money.ts';
import { lockAccount, type BillingContext } from '../accounts/context.ts';
import { budgetView, monthStart, rearmed, type BudgetView, type MonthlyBudget } from './budget.ts';
import { watchBudgets, type Watched } from './watch-charges.ts';

/** The most a monthly budget may be: a million USD. */
export const MAX_MONTHLY_CENTS = 100_000_000;

export interface BudgetSettings {
  monthlyCents: Cents;
  alertPercents: readonly number[];
  stopAtLimit: boolean;
}

/** The settings' problems, each for the field it names (422). */
function check(settings: BudgetSettings): void {
  if (!Number.isSafeInteger(settings.monthlyCents) || settings.monthlyCents <= 0 || settings.monthlyCents > MAX_MONTHLY_CENTS) {
    throw invalidInput(['body', 'monthly_usd'], `must be more than 0 and at most ${MAX_MONTHLY_CENTS / 100} USD`);
  }
  settings.alertPercents.forEach((percent, index) => {
    if (!Number.isInteger(percent) || percent < 1 || percent > 100) throw invalidInput(['body', 'alert_percents', index], 'must be a whole percent from 1 to 100');
    if (settings.alertPercents.indexOf(percent) !== index) throw invalidInput(['body', 'alert_percents', index], `${percent} is listed twice; each percent is told once a month`);
  });
}

/** What follows a budget set under its month's spend, once committed: machines stopped, alerts mailed (BudgetWatch). */
export interface BudgetFollowUp {
  afterCommit(watched: Watched): (() => void) | null;
}

/**
 * Sets the tenant's monthly budget, under the account's lock (no charge moves the month meanwhile). A told alert
 * percent the new budget leaves unreached is re-armed: a raise above the spend tells 80 % again when the spend
 * reaches 80 % of the new budget. A budget set or lowered to what the month has already spent acts at once, as the
 * charge that reached it would have: its reached percents are told (and mailed once committed), and with
 * `stop_at_limit` renting pauses in this transaction and the machines are stopped once it commits.
 */
export async function setBudget(ctx: BillingContext, followUp: BudgetFollowUp, tenantId: string, settings: BudgetSettings): Promise<BudgetView> {
  check(settings);
  const { view, after } = await ctx.storage.transaction(async (uow) => {
    await lockAccount(ctx, uow, tenantId);
    const now = ctx.clock.now();
    const month = monthStart(now);
    const spentCents = await uow.budgets.spent(tenantId, month);
    const told = await uow.budgets.told(tenantId, month);
    const again = rearmed(told, spentCents, settings.monthlyCents);
    await uow.budgets.rearm(tenantId, month, again);
    const budget: MonthlyBudget = {
      tenantId,
      monthlyCents: settings.monthlyCents,
      alertPercents: [...settings.alertPercents].sort((a, b) => a - b),
      stopAtLimit: settings.stopAtLimit,
      updatedAt: now,
    };
    await uow.budgets.put(budget);
    const stillTold = told.filter((p) => !again.includes(p));
    const watched = await watchBudgets(uow, [{ budget, month, spentCents, toldPercents: stillTold }], now);
    return { view: budgetView({ budget, spentCents, toldPercents: [...stillTold, ...watched.toldPercents] }), after: followUp.afterCommit(watched) };
  });
  after?.();
  return view;
}
