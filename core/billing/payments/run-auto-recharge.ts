import { autoRechargeFailedEvent } from '../../events/account-events.ts';
import type { AutoRechargePayment } from '../account.ts';
import { accountFigures, hasUnpaidBlockDue } from '../account-view.ts';
import { isolated } from '../isolated.ts';
import { chargeAttempt, type AutoRechargeReport, type ClaimedAttempt } from './charge-attempt.ts';
import { DAY_MS, type PaymentsContext } from './context.ts';

/**
 * Processors keep idempotency keys for about a day (Stripe: 24 h): an attempt still without an answer
 * after this long is not sent again (it could charge twice); it is closed and the tenant told.
 */
const STALE_ATTEMPT_MS = 23 * 3_600_000;

/**
 * The sweep's auto-recharge run: for each account under its threshold, one payment per trigger, however many
 * sweeps overlap (a pending attempt is a claim only one can hold), at most `maxPaymentsPer24h` in any rolling 24
 * hours; a failure is recorded and not retried until the tenant acts (updates auto-recharge or saves a card).
 */
export async function runAutoRecharge(ctx: PaymentsContext): Promise<AutoRechargeReport> {
  const report: AutoRechargeReport = { attempted: 0, succeeded: 0, failed: 0, errors: [] };
  // attempts that got no answer last time: asked again with the same idempotency key, never a new payment
  for (const pending of await ctx.storage.read((uow) => uow.autoRecharges.pending())) {
    await isolated(report.errors, `auto-recharge attempt ${pending.id}`, async () => {
      if (ctx.clock.now().getTime() - pending.createdAt.getTime() > STALE_ATTEMPT_MS) {
        await abandon(ctx, pending);
        return;
      }
      const account = await ctx.storage.read((uow) => uow.accounts.get(pending.tenantId));
      if (account?.card && account.paymentCustomerId) {
        await chargeAttempt(ctx, { payment: pending, customerId: account.paymentCustomerId, paymentMethodId: account.card.paymentMethodId }, report);
      }
    });
  }
  const candidates = await ctx.storage.read((uow) => uow.autoRecharges.candidates(ctx.clock.now()));
  for (const tenantId of candidates) {
    await isolated(report.errors, `auto-recharge of ${tenantId}`, async () => {
      const claim = await claimRecharge(ctx, tenantId);
      if (claim) await chargeAttempt(ctx, claim, report);
    });
  }
  return report;
}

/**
 * One account's attempt, when it needs one: available funds under the threshold, or an hour block due that the
 * balance could not pay (the machine would otherwise run on credit into the breaker). null: none is needed, or the
 * 24-hour limit is reached (recorded as the account's last error), or another sweep claimed it.
 */
async function claimRecharge(ctx: PaymentsContext, tenantId: string): Promise<ClaimedAttempt | null> {
  return ctx.storage.transaction(async (uow) => {
    const now = ctx.clock.now();
    const account = await uow.accounts.lock(tenantId, now);
    const settings = account?.autoRecharge;
    if (!account || !settings?.enabled || settings.suspended || !account.card || !account.paymentCustomerId) return null;
    const live = await uow.instances.live(tenantId);
    const figures = accountFigures(account.balanceCents, live, now, { stopsAt: false, unsettledUsageCents: await uow.usage.unsettledCents(tenantId) });
    if (figures.availableCents >= settings.thresholdCents && !live.some((i) => hasUnpaidBlockDue(i, now))) return null;
    const recent = await uow.autoRecharges.countSince(tenantId, new Date(now.getTime() - DAY_MS));
    if (recent >= ctx.settings.maxPaymentsPer24h) {
      const lastError = `the limit of ${ctx.settings.maxPaymentsPer24h} automatic payments in 24 hours is reached`;
      if (settings.lastError !== lastError) await uow.accounts.setAutoRecharge(tenantId, { ...settings, lastError });
      return null;
    }
    const payment = { id: ctx.ids.newId('arp'), tenantId, amountCents: settings.amountCents, status: 'pending' as const, error: null, createdAt: now };
    if (!(await uow.autoRecharges.claim(payment))) return null;
    return { payment, customerId: account.paymentCustomerId, paymentMethodId: account.card.paymentMethodId };
  });
}

/** An attempt without an answer for too long: closed as failed, auto-recharge suspended, the tenant told. */
async function abandon(ctx: PaymentsContext, payment: AutoRechargePayment): Promise<void> {
  const error = `no answer from the card processor for attempt ${payment.id} within 23 hours; check the processor's dashboard before turning auto-recharge on again`;
  await ctx.storage.transaction(async (uow) => {
    const now = ctx.clock.now();
    const account = await uow.accounts.lock(payment.tenantId, now);
    await uow.autoRecharges.decide(payment.id, 'failed', error, now);
    if (account) await uow.accounts.setAutoRecharge(payment.tenantId, { ...account.autoRecharge, lastError: error, suspended: true });
    await uow.events.emit(autoRechargeFailedEvent(payment, error, now));
  });
}
