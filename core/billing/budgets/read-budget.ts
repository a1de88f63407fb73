import { DomainError } from '../../errors.ts';
import type { UnitOfWork } from '../../ports/storage.ts';
import type { BillingContext } from '../accounts/context.ts';
import { budgetView, monthStart, type BudgetView } from './budget.ts';

/** The tenant's budget and this month's spend against it; null: none set. */
export async function budgetIn(uow: UnitOfWork, tenantId: string, now: Date): Promise<BudgetView | null> {
  const budget = await uow.budgets.get(tenantId);
  if (!budget) return null;
  const month = monthStart(now);
  return budgetView({ budget, spentCents: await uow.budgets.spent(tenantId, month), toldPercents: await uow.budgets.told(tenantId, month) });
}

/** GET /v1/billing/budget: 404 without one. */
export async function readBudget(ctx: BillingContext, tenantId: string): Promise<BudgetView> {
  const view = await ctx.storage.read((uow) => budgetIn(uow, tenantId, ctx.clock.now()));
  if (!view) throw new DomainError('NOT_FOUND', 'no monthly budget is set; PUT /v1/billing/budget sets one');
  return view;
}
