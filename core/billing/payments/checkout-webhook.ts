import { DomainError, upstreamUnavailable } from '../../errors.ts';
import { InvalidWebhook, type CheckoutState } from '../../ports/payments.ts';
import type { PaymentsContext } from './context.ts';
import { settleCheckout } from './settle-checkout.ts';

/** A webhook delivery from the processor: verified over the raw body, then settled like a sync. */
export async function checkoutWebhook(ctx: PaymentsContext, rawBody: Buffer, signature: string | undefined): Promise<{ handled: string }> {
  let event;
  try {
    event = ctx.payments.parseWebhook(rawBody, signature, ctx.clock.now());
  } catch (error) {
    if (error instanceof InvalidWebhook) throw new DomainError('WEBHOOK_INVALID', `webhook refused: ${error.message}`);
    throw error;
  }
  if (event.kind === 'ignored') return { handled: `ignored ${event.type}` };
  // the event says what happened; the session itself, asked back, says it with authority
  let state: CheckoutState | null;
  try {
    state = await ctx.payments.getCheckout(event.sessionId);
  } catch (error) {
    // 503: the processor delivers the event again later, and the sweep asks about the session anyway
    throw upstreamUnavailable('the card processor did not answer about the session', error, 'deliver the event again');
  }
  if (state) await settleCheckout(ctx, state);
  return { handled: event.kind };
}
