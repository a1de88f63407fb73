import { randomBytes } from 'node:crypto';
import {
  InvalidWebhook,
  type CheckoutCreated,
  type CheckoutRequest,
  type CheckoutState,
  type OffSessionCharge,
  type OffSessionOutcome,
  type PaymentEvent,
  type Payments,
} from '../../../core/ports/payments.ts';
import { MemoryCheckoutStore, type ManualCheckoutStore } from './checkout-store.ts';

const token = (prefix: string) => `${prefix}_${randomBytes(10).toString('hex')}`;

/**
 * The embedded default processor: no network, no money. A checkout is a local page (served by the
 * HTTP host) whose button marks it paid with a pretend card, so the whole flow, saved card and
 * auto-recharge included, can be tried without a processor. Sessions live in `store`: the control
 * plane's database when it builds the processor, so a checkout outlives a restart; memory otherwise.
 */
export class ManualPayments implements Payments {
  readonly name = 'manual';
  private readonly baseUrl: string;
  private readonly store: ManualCheckoutStore;

  constructor(baseUrl: string, store: ManualCheckoutStore = new MemoryCheckoutStore()) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.store = store;
  }

  async createCheckout(request: CheckoutRequest): Promise<CheckoutCreated> {
    const sessionId = token('mcs');
    const customerId = request.customerId ?? token('mcus');
    await this.store.add({
      tenantId: request.tenantId,
      successUrl: request.successUrl,
      cancelUrl: request.cancelUrl,
      state: { sessionId, status: 'open', amountCents: request.amountCents, depositId: request.depositId, customerId, card: null },
    });
    return { sessionId, url: `${this.baseUrl}/v1/payments/manual/${sessionId}`, customerId };
  }

  async getCheckout(sessionId: string): Promise<CheckoutState | null> {
    return (await this.store.get(sessionId))?.state ?? null;
  }

  async chargeOffSession(charge: OffSessionCharge): Promise<OffSessionOutcome> {
    return { ok: true, paymentId: await this.store.paymentFor(charge.idempotencyKey, token('mpi')) };
  }

  async detachCard(): Promise<void> {}

  parseWebhook(): PaymentEvent {
    throw new InvalidWebhook('the manual processor sends no webhooks');
  }

  // ---- the local checkout page ------------------------------------------------------------------

  /** What the page shows; null for an unknown session. */
  async page(sessionId: string): Promise<{ amountCents: number; status: CheckoutState['status']; successUrl: string; cancelUrl: string } | null> {
    const session = await this.store.get(sessionId);
    if (!session) return null;
    const withId = (url: string) => url.replace('{CHECKOUT_SESSION_ID}', sessionId);
    return { amountCents: session.state.amountCents, status: session.state.status, successUrl: withId(session.successUrl), cancelUrl: withId(session.cancelUrl) };
  }

  /** The page's button: the session is paid with a pretend card, saved for later; false when it is not open. */
  pay(sessionId: string): Promise<boolean> {
    return this.store.markPaid(sessionId, { paymentMethodId: token('mpm'), brand: 'manual', last4: '4242' });
  }

  expire(sessionId: string): Promise<boolean> {
    return this.store.markExpired(sessionId);
  }
}
