import type { Cents } from '../../money.ts';
import type { Clock } from '../../ports/clock.ts';
import type { Ids } from '../../ports/ids.ts';
import type { Payments } from '../../ports/payments.ts';
import type { Storage } from '../../ports/storage.ts';
import type { Deposit } from '../account.ts';
import type { AutoRechargeReport } from './charge-attempt.ts';
import { checkoutWebhook } from './checkout-webhook.ts';
import type { PaymentSettings, PaymentsContext } from './context.ts';
import { runAutoRecharge } from './run-auto-recharge.ts';
import { forgetCard, paymentsLast24h, setAutoRecharge, type AutoRechargeUpdate } from './saved-card.ts';
import { settleSession } from './settle-checkout.ts';
import { settlePendingCheckouts, type CheckoutReport } from './settle-pending-checkouts.ts';
import { startCheckout, type CheckoutStarted } from './start-checkout.ts';
import { syncCheckout } from './sync-checkout.ts';

/**
 * Card money in (docs/decisions.md, "Payments"): checkout sessions that credit once when the processor says they are
 * paid (through the webhook, the sync route, the sweep, in any order), the saved card, and auto-recharge with its
 * 24-hour cap. Each use case is a file of this folder; this object hands them what they work with.
 */
export class PaymentsService {
  private readonly context: PaymentsContext;
  readonly settings: PaymentSettings;

  constructor(deps: { storage: Storage; clock: Clock; ids: Ids; payments: Payments; settings: PaymentSettings }) {
    this.context = { storage: deps.storage, clock: deps.clock, ids: deps.ids, payments: deps.payments, settings: deps.settings };
    this.settings = deps.settings;
  }

  get processor(): string {
    return this.context.payments.name;
  }

  checkout(tenantId: string, amountCents: Cents): Promise<CheckoutStarted> {
    return startCheckout(this.context, tenantId, amountCents);
  }

  sync(tenantId: string, sessionId: string): Promise<Deposit> {
    return syncCheckout(this.context, tenantId, sessionId);
  }

  webhook(rawBody: Buffer, signature: string | undefined): Promise<{ handled: string }> {
    return checkoutWebhook(this.context, rawBody, signature);
  }

  settleSession(sessionId: string): Promise<Deposit | null> {
    return settleSession(this.context, sessionId);
  }

  settlePendingCheckouts(): Promise<CheckoutReport> {
    return settlePendingCheckouts(this.context);
  }

  setAutoRecharge(tenantId: string, update: AutoRechargeUpdate): Promise<void> {
    return setAutoRecharge(this.context, tenantId, update);
  }

  forgetCard(tenantId: string): Promise<void> {
    return forgetCard(this.context, tenantId);
  }

  paymentsLast24h(tenantId: string): Promise<number> {
    return paymentsLast24h(this.context, tenantId);
  }

  runAutoRecharge(): Promise<AutoRechargeReport> {
    return runAutoRecharge(this.context);
  }
}
