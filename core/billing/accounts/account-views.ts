import { notFound } from '../../errors.ts';
import type { UnitOfWork } from '../../ports/storage.ts';
import type { Instance } from '../../rentals/instance.ts';
import type { Account } from '../account.ts';
import { accountFigures, type AccountFigures } from '../account-view.ts';
import type { BudgetView } from '../budgets/budget.ts';
import { budgetIn } from '../budgets/read-budget.ts';
import type { BillingContext } from './context.ts';

export interface AccountView {
  account: Account;
  figures: AccountFigures;
  /** The monthly budget and this month's spend against it; null: none set. */
  budget: BudgetView | null;
}

export interface OperatorAccountView extends Omit<AccountView, 'budget'> {
  pendingDeposits: number;
}

/** The tenant's account and its figures now (balance, what its machines and usage owe, what is available). */
export function accountView(ctx: BillingContext, tenantId: string): Promise<AccountView> {
  return ctx.storage.read((uow) => viewIn(ctx, uow, tenantId));
}

/** Every account for the operator, with its figures and pending deposits, read in one go. */
export function operatorAccounts(ctx: BillingContext): Promise<OperatorAccountView[]> {
  return ctx.storage.read(async (uow) => {
    const accounts = await uow.accounts.list();
    const pending = await uow.deposits.pendingCounts();
    const live = await uow.instances.allLive();
    const usage = await uow.usage.unsettledByTenant();
    const now = ctx.clock.now();
    const byTenant = new Map<string, Instance[]>();
    for (const instance of live) {
      const list = byTenant.get(instance.tenantId);
      if (list) list.push(instance);
      else byTenant.set(instance.tenantId, [instance]);
    }
    return accounts.map((account) => ({
      account,
      figures: accountFigures(account.balanceCents, byTenant.get(account.tenantId) ?? [], now, { stopsAt: false, unsettledUsageCents: usage.get(account.tenantId) ?? 0 }),
      pendingDeposits: pending.get(account.tenantId) ?? 0,
    }));
  });
}

/** One account for the operator: the tenant's view and its pending deposits. */
export function operatorAccount(ctx: BillingContext, tenantId: string): Promise<OperatorAccountView> {
  return ctx.storage.read(async (uow) => {
    const pending = await uow.deposits.pendingCounts(tenantId);
    return { ...(await viewIn(ctx, uow, tenantId)), pendingDeposits: pending.get(tenantId) ?? 0 };
  });
}

async function viewIn(ctx: BillingContext, uow: UnitOfWork, tenantId: string): Promise<AccountView> {
  const account = await uow.accounts.get(tenantId);
  if (!account) throw notFound(`tenant ${tenantId}`);
  const live = await uow.instances.live(tenantId);
  const unsettledUsageCents = await uow.usage.unsettledCents(tenantId);
  const now = ctx.clock.now();
  return { account, figures: accountFigures(account.balanceCents, live, now, { unsettledUsageCents }), budget: await budgetIn(uow, tenantId, now) };
}
