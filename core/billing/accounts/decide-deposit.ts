import { DomainError, notFound } from '../../errors.ts';
import { depositEvent } from '../../events/account-events.ts';
import type { Deposit } from '../account.ts';
import { lockAccount, postFresh, type BillingContext } from './context.ts';

/**
 * An operator confirms (credits) or rejects a pending deposit, once: a second decision is a conflict, never a second
 * credit. Only bank transfers, and checkouts the sweep found paid with another amount, wait for an operator.
 */
export async function decideDeposit(ctx: BillingContext, depositId: string, status: 'confirmed' | 'rejected'): Promise<Deposit> {
  return ctx.storage.transaction(async (uow) => {
    const deposit = await uow.deposits.lock(depositId);
    if (!deposit) throw notFound(`deposit ${depositId}`);
    if (deposit.status !== 'pending') {
      throw new DomainError('CONFLICT', `deposit ${depositId} is already ${deposit.status}; a deposit is decided once`);
    }
    // a card checkout is settled by the processor alone (an operator could credit money never paid, or
    // reject a payment that lands later); only a conflict the sweep recorded waits for an operator
    if (deposit.kind !== 'bank_transfer' && deposit.conflict === null) {
      throw new DomainError('CONFLICT', `deposit ${depositId} is a ${deposit.kind.replace('_', ' ')}, settled by the card processor; operators confirm or reject bank transfers only`);
    }
    const now = ctx.clock.now();
    if (status === 'confirmed') {
      await lockAccount(ctx, uow, deposit.tenantId);
      await postFresh(ctx, uow, {
        tenantId: deposit.tenantId,
        kind: 'deposit',
        amountCents: deposit.amountCents,
        reference: deposit.id,
        description: deposit.reference,
        uniqueKey: `deposit:${deposit.id}`,
        at: now,
      });
    }
    await uow.deposits.decide(depositId, status, now);
    if (status === 'confirmed' || status === 'rejected') await uow.events.emit(depositEvent(deposit, status, now));
    return { ...deposit, status, decidedAt: now };
  });
}
