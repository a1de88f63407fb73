import { autoRechargeFailedEvent } from '../../events/account-events.ts';
import type { AutoRechargePayment } from '../account.ts';
import { postEntry } from '../ledger.ts';
import type { PaymentsContext } from './context.ts';

export interface AutoRechargeReport {
  attempted: number;
  succeeded: number;
  failed: number;
  /** Accounts or attempts that failed this pass; the others carried on. */
  errors: string[];
}

/** An attempt claimed for one account (a pending row only one sweep can hold), and the card to charge. */
export interface ClaimedAttempt {
  payment: AutoRechargePayment;
  customerId: string;
  paymentMethodId: string;
}

/**
 * Charges a claimed attempt off session, with the attempt's idempotency key (asked again, the processor answers the
 * same payment), and records the outcome: credited once, or failed with auto-recharge suspended until the tenant
 * acts. No answer leaves it pending for the next sweep.
 */
export async function chargeAttempt(ctx: PaymentsContext, claim: ClaimedAttempt, report: AutoRechargeReport): Promise<void> {
  report.attempted++;
  let outcome;
  try {
    outcome = await ctx.payments.chargeOffSession({
      customerId: claim.customerId,
      paymentMethodId: claim.paymentMethodId,
      amountCents: claim.payment.amountCents,
      idempotencyKey: `auto-recharge:${claim.payment.id}`,
    });
  } catch {
    report.failed++;
    return;
  }
  const tenantId = claim.payment.tenantId;
  await ctx.storage.transaction(async (uow) => {
    const now = ctx.clock.now();
    const account = await uow.accounts.lock(tenantId, now);
    if (!account) return;
    if (outcome.ok) {
      await postEntry(uow, ctx.ids, { tenantId, kind: 'auto_recharge', amountCents: claim.payment.amountCents, reference: outcome.paymentId, description: 'automatic card payment', uniqueKey: `auto-recharge:${claim.payment.id}`, at: now });
      await uow.autoRecharges.decide(claim.payment.id, 'succeeded', null, now);
      if (account.autoRecharge.lastError) await uow.accounts.setAutoRecharge(tenantId, { ...account.autoRecharge, lastError: null });
    } else {
      await uow.autoRecharges.decide(claim.payment.id, 'failed', outcome.reason, now);
      await uow.accounts.setAutoRecharge(tenantId, { ...account.autoRecharge, lastError: outcome.reason, suspended: true });
      await uow.events.emit(autoRechargeFailedEvent(claim.payment, outcome.reason, now));
    }
  });
  if (outcome.ok) report.succeeded++;
  else report.failed++;
}
