import { notFound, upstreamUnavailable } from '../../errors.ts';
import type { Cents } from '../../money.ts';
import type { Deposit } from '../account.ts';
import type { PaymentsContext } from './context.ts';

export interface CheckoutStarted {
  deposit: Deposit;
  url: string;
}

/**
 * A checkout for `amountCents`: a pending deposit now, credited when the processor reports it paid (settle-checkout.ts).
 * A processor that does not open the session leaves the deposit expired and nothing charged.
 */
export async function startCheckout(ctx: PaymentsContext, tenantId: string, amountCents: Cents): Promise<CheckoutStarted> {
  const now = ctx.clock.now();
  const deposit: Deposit = {
    id: ctx.ids.newId('dep'),
    tenantId,
    kind: 'checkout',
    status: 'pending',
    amountCents,
    reference: null,
    reason: null,
    createdAt: now,
    decidedAt: null,
    sessionId: null,
    conflict: null,
  };
  const customerId = await ctx.storage.transaction(async (uow) => {
    const account = await uow.accounts.lock(tenantId, now);
    if (!account) throw notFound(`tenant ${tenantId}`);
    await uow.deposits.add(deposit);
    return account.paymentCustomerId;
  });
  let created;
  try {
    created = await ctx.payments.createCheckout({
      depositId: deposit.id,
      tenantId,
      amountCents,
      customerId,
      successUrl: ctx.settings.successUrl,
      cancelUrl: ctx.settings.cancelUrl,
    });
  } catch (error) {
    await ctx.storage.transaction((uow) => uow.deposits.decide(deposit.id, 'expired', ctx.clock.now()));
    throw upstreamUnavailable('the card processor did not open a checkout', error, 'nothing was charged');
  }
  await ctx.storage.transaction(async (uow) => {
    await uow.deposits.attachSession(deposit.id, created.sessionId);
    if (created.customerId && created.customerId !== customerId) {
      const account = await uow.accounts.lock(tenantId, now);
      await uow.accounts.setCard(tenantId, created.customerId, account?.card ?? null);
    }
  });
  return { deposit: { ...deposit, sessionId: created.sessionId }, url: created.url };
}
