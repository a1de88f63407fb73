import { accountFigures } from '../billing/account-view.ts';
import { notFound } from '../errors.ts';
import type { Cents } from '../money.ts';
import type { MeteringContext } from './context.ts';
import type { Settlement } from './usage.ts';

export interface SettleOutcome extends Settlement {
  /** The account's owed_cents after settling: machines' overruns and the usage still unsettled. */
  remainingOwedCents: Cents;
}

/** Settles the tenant's unsettled records, oldest first, while the balance covers each. */
export async function settleTenantUsage(ctx: MeteringContext, tenantId: string): Promise<SettleOutcome> {
  return ctx.storage.transaction(async (uow) => {
    const now = ctx.clock.now();
    const settled = await uow.usage.settle(now, tenantId);
    const account = await uow.accounts.get(tenantId);
    if (!account) throw notFound(`tenant ${tenantId}`);
    const figures = accountFigures(account.balanceCents, await uow.instances.live(tenantId), now, {
      stopsAt: false,
      unsettledUsageCents: await uow.usage.unsettledCents(tenantId),
    });
    return { ...settled, remainingOwedCents: figures.owedCents };
  });
}

/** The sweep's step: every tenant's unsettled records, in one set-based pass. */
export function settleAllUsage(ctx: MeteringContext): Promise<Settlement> {
  return ctx.storage.transaction((uow) => uow.usage.settle(ctx.clock.now()));
}
