import type { Clock } from '../../ports/clock.ts';
import type { Ids } from '../../ports/ids.ts';
import type { Payments } from '../../ports/payments.ts';
import type { Storage } from '../../ports/storage.ts';

export interface PaymentSettings {
  /** Auto-recharge payments allowed in any rolling 24 hours. */
  maxPaymentsPer24h: number;
  /** Where the processor sends the payer back; the session id is appended by the host. */
  successUrl: string;
  cancelUrl: string;
}

/** What every payments use case works with: our records, the clock, ids, the card processor and the settings. */
export interface PaymentsContext {
  storage: Storage;
  clock: Clock;
  ids: Ids;
  payments: Payments;
  settings: PaymentSettings;
}

export const DAY_MS = 86_400_000;
