import type { Cents } from '../../money.ts';
import type { Deposit } from '../account.ts';
import { lockAccount, type BillingContext } from './context.ts';

/** A tenant announces a bank transfer: a pending deposit, credited only when an operator confirms it (decide-deposit.ts). */
export async function requestDeposit(ctx: BillingContext, tenantId: string, amountCents: Cents, reference: string | null): Promise<Deposit> {
  const deposit: Deposit = {
    id: ctx.ids.newId('dep'),
    tenantId,
    kind: 'bank_transfer',
    status: 'pending',
    amountCents,
    reference,
    reason: null,
    createdAt: ctx.clock.now(),
    decidedAt: null,
    sessionId: null,
    conflict: null,
  };
  await ctx.storage.transaction(async (uow) => {
    await lockAccount(ctx, uow, tenantId);
    await uow.deposits.add(deposit);
  });
  return deposit;
}
