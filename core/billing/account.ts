import type { Cents } from '../money.ts';

/** `budget`: the month's budget is spent and it stops there (core/billing/budgets). */
export type PauseKind = 'emergency_stop' | 'breaker' | 'hold' | 'budget';

export interface Pause {
  kind: PauseKind;
  reason: string | null;
  at: Date;
}

export interface CardOnFile {
  paymentMethodId: string;
  brand: string;
  last4: string;
}

export interface AutoRecharge {
  enabled: boolean;
  thresholdCents: Cents;
  amountCents: Cents;
  lastError: string | null;
  /** After a failed payment: no further attempt until the tenant updates auto-recharge or saves a card. */
  suspended: boolean;
}

export interface Account {
  tenantId: string;
  /** The sum of the tenant's ledger entries. */
  balanceCents: Cents;
  /** null: renting is open. */
  pause: Pause | null;
  /** Runaway protection: the breaker trips when the running machines cost more per hour; null: the default. */
  maxBurnCentsPerHour: Cents | null;
  /** The payment processor's customer for this tenant. */
  paymentCustomerId: string | null;
  card: CardOnFile | null;
  autoRecharge: AutoRecharge;
}

export type AutoRechargePaymentStatus = 'pending' | 'succeeded' | 'failed';

export interface AutoRechargePayment {
  id: string;
  tenantId: string;
  amountCents: Cents;
  status: AutoRechargePaymentStatus;
  error: string | null;
  createdAt: Date;
}

export type LedgerKind = 'deposit' | 'credit' | 'rental_hour' | 'usage' | 'refund' | 'charge' | 'auto_recharge';

export interface LedgerEntry {
  id: string;
  tenantId: string;
  kind: LedgerKind;
  /** Signed: money in is positive, money out negative. */
  amountCents: Cents;
  balanceAfterCents: Cents;
  /** What the entry is about: an instance, a deposit, a usage record. */
  reference: string | null;
  description: string | null;
  createdAt: Date;
}

/** A ledger entry to post; `uniqueKey` makes posting the same thing twice impossible. */
export interface LedgerPosting {
  tenantId: string;
  kind: LedgerKind;
  amountCents: Cents;
  reference: string | null;
  description: string | null;
  uniqueKey: string;
  at: Date;
}

export type DepositKind = 'bank_transfer' | 'checkout' | 'credit';
export type DepositStatus = 'pending' | 'confirmed' | 'rejected' | 'expired';

export interface Deposit {
  id: string;
  tenantId: string;
  kind: DepositKind;
  status: DepositStatus;
  amountCents: Cents;
  reference: string | null;
  reason: string | null;
  createdAt: Date;
  decidedAt: Date | null;
  /** The card processor's checkout session, for a checkout deposit. */
  sessionId: string | null;
  /** Why an operator must decide it (a checkout paid with another amount); null for most. */
  conflict: string | null;
}
