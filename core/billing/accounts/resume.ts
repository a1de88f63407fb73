import { DomainError, notFound } from '../../errors.ts';
import type { Clock } from '../../ports/clock.ts';
import type { Storage } from '../../ports/storage.ts';
import { accountFigures } from '../account-view.ts';
import { budgetStillSpent } from '../budgets/budget-resume.ts';
import { requireRoot } from '../../tenancy/authority.ts';
import type { Token } from '../../tenancy/token.ts';

/**
 * The tenant reopens renting after an emergency stop, after a tripped breaker once funds are in, after a budget stop
 * in a new month or once the budget was raised above the spend (root only); never past an operator's hold.
 */
export async function resumeRenting(ctx: { storage: Storage; clock: Clock }, caller: Token): Promise<void> {
  const tenantId = caller.tenantId;
  await ctx.storage.transaction(async (uow) => {
    const now = ctx.clock.now();
    const account = await uow.accounts.lock(tenantId, now);
    if (!account) throw notFound(`tenant ${tenantId}`);
    if (!account.pause) return;
    if (account.pause.kind === 'hold') {
      throw new DomainError('CONFLICT', 'renting is on an operator hold; only an operator can lift it');
    }
    if (account.pause.kind === 'breaker') {
      const figures = accountFigures(account.balanceCents, await uow.instances.live(tenantId), now, { stopsAt: false, unsettledUsageCents: await uow.usage.unsettledCents(tenantId) });
      if (figures.availableCents <= 0) {
        throw new DomainError('CONFLICT', `the breaker tripped because funds ran out; ${figures.availableCents} cents are available, add funds first`);
      }
    }
    if (account.pause.kind === 'budget') {
      // the budget is root's to decide (docs/decisions.md, "One tree of authority"): so is renting past its stop
      requireRoot(caller, 'resuming renting after a budget stop');
      const spent = await budgetStillSpent(uow, tenantId, account.pause.at, now);
      if (spent) throw new DomainError('CONFLICT', spent);
    }
    await uow.accounts.setPause(tenantId, null);
  });
}

/** The operator lifts any pause. */
export async function operatorResume(ctx: { storage: Storage; clock: Clock }, tenantId: string): Promise<void> {
  await ctx.storage.transaction(async (uow) => {
    const account = await uow.accounts.lock(tenantId, ctx.clock.now());
    if (!account) throw notFound(`tenant ${tenantId}`);
    await uow.accounts.setPause(tenantId, null);
  });
}
