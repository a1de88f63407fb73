import type { Account, AutoRecharge, AutoRechargePayment, CardOnFile, Deposit, DepositKind, DepositStatus, LedgerEntry, LedgerPosting, Pause } from '../billing/account.ts';

export interface AutoRechargeStore {
  /**
   * Accounts with auto-recharge on, a card saved and not suspended, that may need a payment: a balance
   * under the threshold, or an hour block due at `now` that is not paid.
   */
  candidates(now: Date): Promise<string[]>;
  /** Attempts that charged the card (or may have: pending) since `since`. */
  countSince(tenantId: string, since: Date): Promise<number>;
  /** Adds a pending attempt; false when the account already has one pending (another sweep is paying). */
  claim(payment: AutoRechargePayment): Promise<boolean>;
  decide(paymentId: string, status: 'succeeded' | 'failed', error: string | null, at: Date): Promise<void>;
  /** Attempts still waiting for the processor's answer, oldest first. */
  pending(): Promise<AutoRechargePayment[]>;
  /** Newest first. */
  list(tenantId: string, limit: number): Promise<AutoRechargePayment[]>;
}

export interface AccountStore {
  /** The tenant's account, created on first use, locked until the transaction ends. null: no such tenant. */
  lock(tenantId: string, now: Date): Promise<Account | null>;
  /** The tenant's account without a lock; an account never used reads as empty and open. */
  get(tenantId: string): Promise<Account | null>;
  setPause(tenantId: string, pause: Pause | null): Promise<void>;
  /** The processor's customer and the card saved on it (null forgets the card). */
  setCard(tenantId: string, customerId: string | null, card: CardOnFile | null): Promise<void>;
  setAutoRecharge(tenantId: string, settings: AutoRecharge): Promise<void>;
  /** Every account, oldest tenant first. */
  list(): Promise<Account[]>;
  /**
   * Accounts that may have crossed the low-balance line (balance.low) either way: those marked low, and those with
   * machines billed now whose balance is under twice `hours` of their burn or their auto-recharge threshold, or
   * whose machines run past their paid time. The caller decides under the lock.
   */
  lowBalanceCandidates(now: Date, hours: number): Promise<string[]>;
  /** When the account was last told its balance is low; null: not low since. */
  balanceLowSince(tenantId: string): Promise<Date | null>;
  markBalanceLow(tenantId: string, at: Date | null): Promise<void>;
}

export interface LedgerStore {
  /**
   * Posts an entry and moves the balance with it. The caller holds the account's lock. Returns null,
   * posting nothing, when an entry with the same unique key exists.
   */
  post(posting: LedgerPosting, id: string): Promise<LedgerEntry | null>;
  /** Newest first. */
  list(tenantId: string, limit: number): Promise<LedgerEntry[]>;
  /** Every entry of the tenant, oldest first (summaries). */
  all(tenantId: string): Promise<LedgerEntry[]>;
}

export interface DepositStore {
  add(deposit: Deposit): Promise<void>;
  /** Locked until the transaction ends, so one decision wins. */
  lock(depositId: string): Promise<Deposit | null>;
  get(depositId: string): Promise<Deposit | null>;
  decide(depositId: string, status: DepositStatus, at: Date): Promise<void>;
  attachSession(depositId: string, sessionId: string): Promise<void>;
  /** The checkout deposit of a processor session, locked until the transaction ends. */
  lockBySession(sessionId: string): Promise<Deposit | null>;
  /** The tenant's, newest first. */
  listForTenant(tenantId: string): Promise<Deposit[]>;
  /** Every tenant's with this status (and kind, when given), oldest first. */
  listByStatus(status: DepositStatus, kind?: DepositKind): Promise<Deposit[]>;
  /**
   * What waits for an operator, oldest first: bank transfers with this status, and (for `pending`)
   * card checkouts whose paid amount conflicts with the deposit.
   */
  fundRequests(status: DepositStatus): Promise<Deposit[]>;
  /** Pending checkouts the sweep should ask the processor about: those without a recorded conflict. */
  pendingCheckouts(): Promise<Deposit[]>;
  /** Records why a deposit needs an operator; it stays pending. */
  recordConflict(depositId: string, conflict: string): Promise<void>;
  /** Pending fund requests (as `fundRequests('pending')` lists them) per tenant. */
  pendingCounts(tenantId?: string): Promise<Map<string, number>>;
}
