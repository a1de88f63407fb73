import type { CheckoutStatus } from '../../../core/ports/payments.ts';
import type { ManualCheckoutStore, ManualSession } from './checkout-store.ts';

/** Raw SQL on the control plane's database (MikroStorage.execute; `?` placeholders), one statement per call. */
export interface ManualDatabase {
  execute<T = Record<string, unknown>[]>(sql: string, params?: unknown[]): Promise<T>;
}

type Row = Record<string, unknown>;
const text = (value: unknown): string | null => (value === null || value === undefined ? null : String(value));

const toSession = (row: Row): ManualSession => {
  const paymentMethodId = text(row.card_payment_method_id);
  return {
    tenantId: String(row.tenant_id),
    successUrl: String(row.success_url),
    cancelUrl: String(row.cancel_url),
    state: {
      sessionId: String(row.session_id),
      status: String(row.status) as CheckoutStatus,
      amountCents: Number(row.amount_cents),
      depositId: text(row.deposit_id),
      customerId: text(row.customer_id),
      card: paymentMethodId ? { paymentMethodId, brand: String(row.card_brand), last4: String(row.card_last4) } : null,
    },
  };
};

/** The embedded processor's checkouts in tables `manual_checkouts` and `manual_charges` (migration 0006). */
export class SqlCheckoutStore implements ManualCheckoutStore {
  private readonly db: ManualDatabase;

  constructor(db: ManualDatabase) {
    this.db = db;
  }

  async add({ state, tenantId, successUrl, cancelUrl }: ManualSession): Promise<void> {
    await this.db.execute(
      `insert into manual_checkouts (session_id, tenant_id, deposit_id, customer_id, amount_cents, status, success_url, cancel_url,
         card_payment_method_id, card_brand, card_last4)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [state.sessionId, tenantId, state.depositId, state.customerId, state.amountCents, state.status, successUrl, cancelUrl,
        state.card?.paymentMethodId ?? null, state.card?.brand ?? null, state.card?.last4 ?? null],
    );
  }

  async get(sessionId: string): Promise<ManualSession | null> {
    const [row] = await this.db.execute<Row[]>(`select * from manual_checkouts where session_id = ?`, [sessionId]);
    return row ? toSession(row) : null;
  }

  async markPaid(sessionId: string, card: { paymentMethodId: string; brand: string; last4: string }): Promise<boolean> {
    const rows = await this.db.execute<Row[]>(
      `update manual_checkouts set status = 'paid', card_payment_method_id = ?, card_brand = ?, card_last4 = ?
        where session_id = ? and status = 'open' returning session_id`,
      [card.paymentMethodId, card.brand, card.last4, sessionId],
    );
    return rows.length === 1;
  }

  async markExpired(sessionId: string): Promise<boolean> {
    const rows = await this.db.execute<Row[]>(
      `update manual_checkouts set status = 'expired' where session_id = ? and status = 'open' returning session_id`,
      [sessionId],
    );
    return rows.length === 1;
  }

  async paymentFor(idempotencyKey: string, fresh: string): Promise<string> {
    // the no-op update makes the row come back whether it was just made or already there
    const [row] = await this.db.execute<Row[]>(
      `insert into manual_charges (idempotency_key, payment_id) values (?, ?)
       on conflict (idempotency_key) do update set idempotency_key = excluded.idempotency_key
       returning payment_id`,
      [idempotencyKey, fresh],
    );
    return String(row!.payment_id);
  }
}
