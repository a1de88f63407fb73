import { crashPoint } from '../../crash-points.ts';
import { notFound } from '../../errors.ts';
import { depositEvent } from '../../events/account-events.ts';
import type { CheckoutState } from '../../ports/payments.ts';
import type { Deposit } from '../account.ts';
import { postEntry } from '../ledger.ts';
import type { PaymentsContext } from './context.ts';

/**
 * Settles a checkout from what the processor says of its session, whoever asked (the webhook, the payer's sync, the
 * sweep's catch-up, in any order): a paid session is credited once (the deposit's lock and its ledger key make a
 * second credit impossible), an expired one closed, and one paid with another amount left for an operator.
 */
export async function settleCheckout(ctx: PaymentsContext, state: CheckoutState): Promise<Deposit> {
  return ctx.storage.transaction(async (uow) => {
    const deposit = await uow.deposits.lockBySession(state.sessionId);
    if (!deposit) throw notFound(`checkout session ${state.sessionId}`);
    if (deposit.status !== 'pending' || state.status === 'open') return deposit;
    const now = ctx.clock.now();
    if (state.status === 'expired') {
      await uow.deposits.decide(deposit.id, 'expired', now);
      return { ...deposit, status: 'expired', decidedAt: now };
    }
    if (state.amountCents !== deposit.amountCents) {
      // never credit a guess: the deposit waits for an operator, who sees it in the fund-request queue
      const conflict = `the processor reports checkout ${state.sessionId} paid ${state.amountCents} cents for a deposit of ${deposit.amountCents}; an operator confirms or rejects it`;
      if (deposit.conflict !== conflict) await uow.deposits.recordConflict(deposit.id, conflict);
      return { ...deposit, conflict };
    }
    const account = await uow.accounts.lock(deposit.tenantId, now);
    await postEntry(uow, ctx.ids, { tenantId: deposit.tenantId, kind: 'deposit', amountCents: deposit.amountCents, reference: deposit.id, description: 'card payment', uniqueKey: `deposit:${deposit.id}`, at: now });
    crashPoint('webhook-between-credit-and-mark');
    await uow.deposits.decide(deposit.id, 'confirmed', now);
    await uow.events.emit(depositEvent(deposit, 'confirmed', now));
    if (state.card) {
      await uow.accounts.setCard(deposit.tenantId, state.customerId, state.card);
      // a new card lifts a suspension left by a failed auto-recharge
      if (account) await uow.accounts.setAutoRecharge(deposit.tenantId, { ...account.autoRecharge, suspended: false, lastError: null });
    }
    return { ...deposit, status: 'confirmed', decidedAt: now };
  });
}

/** Settles a session from what the processor says of it now (the embedded page, the sweep); null: the processor knows no such session. */
export async function settleSession(ctx: PaymentsContext, sessionId: string): Promise<Deposit | null> {
  const state = await ctx.payments.getCheckout(sessionId);
  return state ? settleCheckout(ctx, state) : null;
}
