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

interface ManualSession {
  state: CheckoutState;
  tenantId: string;
  successUrl: string;
  cancelUrl: string;
}

const token = (prefix: string) => `${prefix}_${randomBytes(10).toString('hex')}`;

/**
 * The embedded default processor: no network, no money. A checkout is a local page (served by the
 * HTTP host) whose button marks it paid with a pretend card, so the whole flow, saved card and
 * auto-recharge included, can be tried without a processor. Sessions live in this process's memory.
 */
export class ManualPayments implements Payments {
  readonly name = 'manual';
  private readonly baseUrl: string;
  private readonly sessions = new Map<string, ManualSession>();
  private readonly charges = new Map<string, string>();

  constructor(baseUrl: string) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
  }

  async createCheckout(request: CheckoutRequest): Promise<CheckoutCreated> {
    const sessionId = token('mcs');
    const customerId = request.customerId ?? token('mcus');
    this.sessions.set(sessionId, {
      tenantId: request.tenantId,
      successUrl: request.successUrl,
      cancelUrl: request.cancelUrl,
      state: { sessionId, status: 'open', amountCents: request.amountCents, depositId: request.depositId, customerId, card: null },
    });
    return { sessionId, url: `${this.baseUrl}/v1/payments/manual/${sessionId}`, customerId };
  }

  async getCheckout(sessionId: string): Promise<CheckoutState | null> {
    const session = this.sessions.get(sessionId);
    return session ? { ...session.state } : null;
  }

  async chargeOffSession(charge: OffSessionCharge): Promise<OffSessionOutcome> {
    let paymentId = this.charges.get(charge.idempotencyKey);
    if (!paymentId) {
      paymentId = token('mpi');
      this.charges.set(charge.idempotencyKey, paymentId);
    }
    return { ok: true, paymentId };
  }

  async detachCard(): Promise<void> {}

  parseWebhook(): PaymentEvent {
    throw new InvalidWebhook('the manual processor sends no webhooks');
  }

  // ---- the local checkout page ------------------------------------------------------------------

  /** What the page shows; null for an unknown session. */
  page(sessionId: string): { amountCents: number; status: CheckoutState['status']; successUrl: string; cancelUrl: string } | null {
    const session = this.sessions.get(sessionId);
    if (!session) return null;
    const withId = (url: string) => url.replace('{CHECKOUT_SESSION_ID}', sessionId);
    return { amountCents: session.state.amountCents, status: session.state.status, successUrl: withId(session.successUrl), cancelUrl: withId(session.cancelUrl) };
  }

  /** The page's button: the session is paid with a pretend card, saved for later. */
  pay(sessionId: string): boolean {
    const session = this.sessions.get(sessionId);
    if (!session || session.state.status !== 'open') return false;
    session.state = { ...session.state, status: 'paid', card: { paymentMethodId: token('mpm'), brand: 'manual', last4: '4242' } };
    return true;
  }

  expire(sessionId: string): boolean {
    const session = this.sessions.get(sessionId);
    if (!session || session.state.status !== 'open') return false;
    session.state = { ...session.state, status: 'expired' };
    return true;
  }
}
