import type { Cents } from '../money.ts';
import type { Clock } from '../ports/clock.ts';
import type { Ids } from '../ports/ids.ts';
import type { Storage } from '../ports/storage.ts';
import type { Deposit, DepositStatus, LedgerEntry } from './account.ts';
import { accountView, operatorAccount, operatorAccounts, type AccountView, type OperatorAccountView } from './accounts/account-views.ts';
import type { BillingContext } from './accounts/context.ts';
import { decideDeposit } from './accounts/decide-deposit.ts';
import { operatorCharge, operatorCredit } from './accounts/operator-postings.ts';
import { requestDeposit } from './accounts/request-deposit.ts';
import { billingPeriods, type BillingPeriod, type Granularity } from './periods.ts';

/**
 * The prepaid account: its figures, the ledger and deposits, and the operator's back office for them. Every movement
 * of money is a ledger posting under the account's lock, with a unique key. The use cases that move money are files
 * of core/billing/accounts; this object hands them what they work with, and answers the plain reads itself.
 */
export class BillingService {
  private readonly context: BillingContext;

  constructor(deps: { storage: Storage; clock: Clock; ids: Ids }) {
    this.context = { storage: deps.storage, clock: deps.clock, ids: deps.ids };
  }

  account(tenantId: string): Promise<AccountView> {
    return accountView(this.context, tenantId);
  }

  requestDeposit(tenantId: string, amountCents: Cents, reference: string | null): Promise<Deposit> {
    return requestDeposit(this.context, tenantId, amountCents, reference);
  }

  deposits(tenantId: string): Promise<Deposit[]> {
    return this.context.storage.read((uow) => uow.deposits.listForTenant(tenantId));
  }

  ledger(tenantId: string, limit: number): Promise<LedgerEntry[]> {
    return this.context.storage.read((uow) => uow.ledger.list(tenantId, limit));
  }

  async summary(tenantId: string, granularity: Granularity, options: { year?: number; limit: number }): Promise<BillingPeriod[]> {
    const entries = await this.context.storage.read((uow) => uow.ledger.all(tenantId));
    return billingPeriods(entries, granularity, options);
  }

  // ---- operator --------------------------------------------------------------------------------

  operatorAccounts(): Promise<OperatorAccountView[]> {
    return operatorAccounts(this.context);
  }

  operatorAccount(tenantId: string): Promise<OperatorAccountView> {
    return operatorAccount(this.context, tenantId);
  }

  /** The operator's queue: bank transfers, and checkouts whose payment conflicts with them. */
  depositsByStatus(status: DepositStatus): Promise<Deposit[]> {
    return this.context.storage.read((uow) => uow.deposits.fundRequests(status));
  }

  confirmDeposit(depositId: string): Promise<Deposit> {
    return decideDeposit(this.context, depositId, 'confirmed');
  }

  rejectDeposit(depositId: string): Promise<Deposit> {
    return decideDeposit(this.context, depositId, 'rejected');
  }

  credit(tenantId: string, amountCents: Cents, reason: string): Promise<Deposit> {
    return operatorCredit(this.context, tenantId, amountCents, reason);
  }

  charge(tenantId: string, amountCents: Cents, reason: string): Promise<LedgerEntry> {
    return operatorCharge(this.context, tenantId, amountCents, reason);
  }
}
