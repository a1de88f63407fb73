import type { CheckoutState, SavedCard } from '../../../core/ports/payments.ts';

/** One checkout of the embedded processor: what the page shows and where the payer goes back to. */
export interface ManualSession {
  state: CheckoutState;
  tenantId: string;
  successUrl: string;
  cancelUrl: string;
}

/**
 * Where the embedded processor keeps its checkouts and the payment ids of its off-session charges. Inside a
 * control plane that is its database, so a checkout started before a restart can still be paid after it.
 * Each change of a session's status is one atomic step: it happens once, whoever asks twice.
 */
export interface ManualCheckoutStore {
  add(session: ManualSession): Promise<void>;
  get(sessionId: string): Promise<ManualSession | null>;
  /** An open session becomes paid with `card`; false when it is unknown or no longer open. */
  markPaid(sessionId: string, card: SavedCard): Promise<boolean>;
  /** An open session expires; false when it is unknown or no longer open. */
  markExpired(sessionId: string): Promise<boolean>;
  /** The payment id of the first charge made under this key; `fresh` becomes it when there was none. */
  paymentFor(idempotencyKey: string, fresh: string): Promise<string>;
}

/** Checkouts in this process only: a ManualPayments built without a database (the contract suite, embedding). */
export class MemoryCheckoutStore implements ManualCheckoutStore {
  private readonly sessions = new Map<string, ManualSession>();
  private readonly charges = new Map<string, string>();

  async add(session: ManualSession): Promise<void> {
    this.sessions.set(session.state.sessionId, structuredClone(session));
  }

  async get(sessionId: string): Promise<ManualSession | null> {
    const session = this.sessions.get(sessionId);
    return session ? structuredClone(session) : null;
  }

  async markPaid(sessionId: string, card: SavedCard): Promise<boolean> {
    return this.leaveOpen(sessionId, (state) => ({ ...state, status: 'paid', card: { ...card } }));
  }

  async markExpired(sessionId: string): Promise<boolean> {
    return this.leaveOpen(sessionId, (state) => ({ ...state, status: 'expired' }));
  }

  async paymentFor(idempotencyKey: string, fresh: string): Promise<string> {
    const known = this.charges.get(idempotencyKey);
    if (known) return known;
    this.charges.set(idempotencyKey, fresh);
    return fresh;
  }

  private leaveOpen(sessionId: string, next: (state: CheckoutState) => CheckoutState): boolean {
    const session = this.sessions.get(sessionId);
    if (!session || session.state.status !== 'open') return false;
    session.state = next(session.state);
    return true;
  }
}
