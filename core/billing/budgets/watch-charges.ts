import { budgetThresholdEvent } from '../../events/budget-events.ts';
import type { BudgetAlert, ChargedBudget } from '../../ports/budget-storage.ts';
import type { UnitOfWork } from '../../ports/storage.ts';
import { budgetPauseReason, dueAlerts, limitReached, monthStart } from './budget.ts';

export interface Watched {
  /** Tenants whose renting this transaction paused for their budget: their machines are to be stopped. */
  stopped: string[];
  /** How many alerts this transaction told (their mail waits in the outbox). */
  told: number;
}

/**
 * In the transaction of a charge, before it commits (docs/decisions.md, "Monthly budgets"): for each budget whose
 * month the transaction charged, the alert percents now reached and not told this month are recorded, each once
 * (the record's key is the tenant, month and percent), with their webhook event; and when the whole budget is spent
 * and it says stop, renting pauses (kind budget) in this same transaction, so no later spend of the tenant passes
 * the gate. Every posting holds the account's lock, so the month's spend and its told percents cannot move meanwhile.
 */
export async function watchCharges(uow: UnitOfWork, now: Date): Promise<Watched> {
  return watchBudgets(uow, await uow.budgets.chargedHere(), now);
}

/**
 * The sweep's evaluation of every budget's month as it stands (docs/decisions.md, "Monthly budgets"): a first hour left
 * out while its rental was in flight counts once its machine is up, and a figure lowered by refunds is what is judged.
 */
export async function watchMonth(uow: UnitOfWork, now: Date): Promise<Watched> {
  return watchBudgets(uow, await uow.budgets.inMonth(monthStart(now)), now);
}

/**
 * What a charge does to the budgets it moved, and what setting a budget does to its own at once: the alert percents
 * reached and not told are told, and a budget spent that says stop pauses renting, in the caller's transaction under
 * the account's lock.
 */
export async function watchBudgets(uow: UnitOfWork, charged: readonly ChargedBudget[], now: Date): Promise<Watched & { toldPercents: number[] }> {
  const due: BudgetAlert[] = charged.flatMap(({ budget, month, spentCents, toldPercents }) =>
    dueAlerts({ budget, spentCents, toldPercents }).map((percent) => ({
      tenantId: budget.tenantId,
      month,
      percent,
      monthlyCents: budget.monthlyCents,
      spentCents,
      stopAtLimit: budget.stopAtLimit,
      toldAt: now,
    })),
  );
  // one statement for every alert of the transaction (a sweep's blocks may charge many budgets at once)
  const told = await uow.budgets.recordAlerts(due);
  await uow.events.emitMany(told.map(budgetThresholdEvent));
  const stopped: string[] = [];
  for (const { budget, month, spentCents } of charged) {
    // a charge dated in a month already over (none is: postings are dated now) stops nothing in this one
    if (!budget.stopAtLimit || !limitReached(spentCents, budget.monthlyCents) || month.getTime() !== monthStart(now).getTime()) continue;
    const account = await uow.accounts.lock(budget.tenantId, now);
    // a pause already in place stays (a hold stays a hold; machines under a stop or breaker are stopping)
    if (!account || account.pause) continue;
    await uow.accounts.setPause(budget.tenantId, { kind: 'budget', reason: budgetPauseReason(budget.monthlyCents, spentCents, month), at: now });
    stopped.push(budget.tenantId);
  }
  return { stopped, told: told.length, toldPercents: told.map((alert) => alert.percent) };
}
