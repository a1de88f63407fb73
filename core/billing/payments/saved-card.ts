import { DomainError, invalidInput, notFound, upstreamUnavailable } from '../../errors.ts';
import type { Cents } from '../../money.ts';
import type { AutoRecharge } from '../account.ts';
import { DAY_MS, type PaymentsContext } from './context.ts';

export interface AutoRechargeUpdate {
  enabled: boolean;
  thresholdCents?: Cents | null;
  amountCents?: Cents | null;
}

/**
 * Turns auto-recharge on or off and sets its threshold and amount (a value left out keeps the current one). Turning
 * it on needs a saved card and both amounts; any change clears the last error and lifts a suspension.
 */
export async function setAutoRecharge(ctx: PaymentsContext, tenantId: string, update: AutoRechargeUpdate): Promise<void> {
  await ctx.storage.transaction(async (uow) => {
    const account = await uow.accounts.lock(tenantId, ctx.clock.now());
    if (!account) throw notFound(`tenant ${tenantId}`);
    const threshold = update.thresholdCents ?? account.autoRecharge.thresholdCents;
    const amount = update.amountCents ?? account.autoRecharge.amountCents;
    if (update.enabled) {
      if (!account.card) throw new DomainError('CONFLICT', 'no saved card: pay once by card (POST /v1/billing/checkout) to save one, then turn auto-recharge on');
      if (threshold <= 0) throw invalidInput(['body', 'threshold_usd'], 'required to turn auto-recharge on');
      if (amount <= 0) throw invalidInput(['body', 'amount_usd'], 'required to turn auto-recharge on');
    }
    const settings: AutoRecharge = { enabled: update.enabled, thresholdCents: threshold, amountCents: amount, lastError: null, suspended: false };
    await uow.accounts.setAutoRecharge(tenantId, settings);
  });
}

/** Forgets the saved card at the processor and here; auto-recharge turns off. */
export async function forgetCard(ctx: PaymentsContext, tenantId: string): Promise<void> {
  const account = await ctx.storage.read((uow) => uow.accounts.get(tenantId));
  if (!account) throw notFound(`tenant ${tenantId}`);
  if (account.card) {
    try {
      await ctx.payments.detachCard(account.card.paymentMethodId);
    } catch (error) {
      throw upstreamUnavailable('the card processor did not answer', error, 'the card is still saved, try again');
    }
  }
  await ctx.storage.transaction(async (uow) => {
    const locked = await uow.accounts.lock(tenantId, ctx.clock.now());
    if (!locked) return;
    await uow.accounts.setCard(tenantId, null, null);
    await uow.accounts.setAutoRecharge(tenantId, { ...locked.autoRecharge, enabled: false, suspended: false });
  });
}

/** Automatic payments of the tenant in the last 24 hours (the limit is `maxPaymentsPer24h`). */
export async function paymentsLast24h(ctx: PaymentsContext, tenantId: string): Promise<number> {
  const since = new Date(ctx.clock.now().getTime() - DAY_MS);
  return ctx.storage.read((uow) => uow.autoRecharges.countSince(tenantId, since));
}
