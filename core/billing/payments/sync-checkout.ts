import { notFound, upstreamUnavailable } from '../../errors.ts';
import type { CheckoutState } from '../../ports/payments.ts';
import type { Deposit } from '../account.ts';
import type { PaymentsContext } from './context.ts';
import { settleCheckout } from './settle-checkout.ts';

/** The payer came back: the processor is asked how the tenant's checkout went, and it is settled. */
export async function syncCheckout(ctx: PaymentsContext, tenantId: string, sessionId: string): Promise<Deposit> {
  const deposit = await ctx.storage.transaction((uow) => uow.deposits.lockBySession(sessionId));
  if (!deposit || deposit.tenantId !== tenantId) throw notFound(`checkout session ${sessionId}`);
  if (deposit.status !== 'pending') return deposit;
  let state: CheckoutState | null;
  try {
    state = await ctx.payments.getCheckout(sessionId);
  } catch (error) {
    throw upstreamUnavailable('the card processor did not answer', error, 'try again');
  }
  return state ? settleCheckout(ctx, state) : deposit;
}
