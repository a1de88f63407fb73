import { lockAccount, type BillingContext } from '../accounts/context.ts';

/**
 * Removes the tenant's budget: nothing is told or stopped for it any more. The alerts told this month stay recorded,
 * so a budget set again this month does not tell them twice; a budget pause stays until POST /v1/billing/resume,
 * which a tenant without a budget may always call.
 */
export async function clearBudget(ctx: BillingContext, tenantId: string): Promise<void> {
  await ctx.storage.transaction(async (uow) => {
    await lockAccount(ctx, uow, tenantId);
    await uow.budgets.remove(tenantId);
  });
}
