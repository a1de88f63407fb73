import { DomainError, notFound } from '../errors.ts';
import type { Cents } from '../money.ts';
import type { Clock } from '../ports/clock.ts';
import type { Ids } from '../ports/ids.ts';
import type { Storage, UnitOfWork } from '../ports/storage.ts';
import type { Instance } from '../rentals/instance.ts';
import type { Account, Deposit, DepositStatus, LedgerEntry, LedgerPosting } from './account.ts';
import { postEntry } from './ledger.ts';
import { depositEvent } from '../events/account-events.ts';
import { accountFigures, type AccountFigures } from './account-view.ts';
import { billingPeriods, type BillingPeriod, type Granularity } from './periods.ts';

export interface AccountView {
  account: Account;
  figures: AccountFigures;
}

export interface OperatorAccountView extends AccountView {
  pendingDeposits: number;
}

/**
 * The prepaid account: its figures, the ledger and deposits, and the operator's back office for them.
 * Every movement of money is a ledger posting under the account's lock, with a unique key.
 */
export class BillingService {
  private readonly storage: Storage;
  private readonly clock: Clock;
  private readonly ids: Ids;

  constructor(deps: { storage: Storage; clock: Clock; ids: Ids }) {
    this.storage = deps.storage;
    this.clock = deps.clock;
    this.ids = deps.ids;
  }

  async account(tenantId: string): Promise<AccountView> {
    return this.storage.read(async (uow) => this.view(uow, tenantId));
  }

  async requestDeposit(tenantId: string, amountCents: Cents, reference: string | null): Promise<Deposit> {
    const deposit: Deposit = {
      id: this.ids.newId('dep'),
      tenantId,
      kind: 'bank_transfer',
      status: 'pending',
      amountCents,
      reference,
      reason: null,
      createdAt: this.clock.now(),
      decidedAt: null,
      sessionId: null,
      conflict: null,
    };
    await this.storage.transaction(async (uow) => {
      await this.lockAccount(uow, tenantId);
      await uow.deposits.add(deposit);
    });
    return deposit;
  }

  deposits(tenantId: string): Promise<Deposit[]> {
    return this.storage.read((uow) => uow.deposits.listForTenant(tenantId));
  }

  ledger(tenantId: string, limit: number): Promise<LedgerEntry[]> {
    return this.storage.read((uow) => uow.ledger.list(tenantId, limit));
  }

  async summary(tenantId: string, granularity: Granularity, options: { year?: number; limit: number }): Promise<BillingPeriod[]> {
    const entries = await this.storage.read((uow) => uow.ledger.all(tenantId));
    return billingPeriods(entries, granularity, options);
  }

  // ---- operator --------------------------------------------------------------------------------

  async operatorAccounts(): Promise<OperatorAccountView[]> {
    return this.storage.read(async (uow) => {
      const accounts = await uow.accounts.list();
      const pending = await uow.deposits.pendingCounts();
      const live = await uow.instances.allLive();
      const usage = await uow.usage.unsettledByTenant();
      const now = this.clock.now();
      const byTenant = new Map<string, Instance[]>();
      for (const instance of live) {
        const list = byTenant.get(instance.tenantId);
        if (list) list.push(instance);
        else byTenant.set(instance.tenantId, [instance]);
      }
      return accounts.map((account) => ({
        account,
        figures: accountFigures(account.balanceCents, byTenant.get(account.tenantId) ?? [], now, { stopsAt: false, unsettledUsageCents: usage.get(account.tenantId) ?? 0 }),
        pendingDeposits: pending.get(account.tenantId) ?? 0,
      }));
    });
  }

  async operatorAccount(tenantId: string): Promise<OperatorAccountView> {
    return this.storage.read(async (uow) => {
      const pending = await uow.deposits.pendingCounts(tenantId);
      return { ...(await this.view(uow, tenantId)), pendingDeposits: pending.get(tenantId) ?? 0 };
    });
  }

  /** The operator's queue: bank transfers, and checkouts whose payment conflicts with them. */
  depositsByStatus(status: DepositStatus): Promise<Deposit[]> {
    return this.storage.read((uow) => uow.deposits.fundRequests(status));
  }

  /** Confirms a pending deposit and credits it, once: a second decision is a conflict, never a second credit. */
  async confirmDeposit(depositId: string): Promise<Deposit> {
    return this.decide(depositId, 'confirmed');
  }

  async rejectDeposit(depositId: string): Promise<Deposit> {
    return this.decide(depositId, 'rejected');
  }

  /** Operator credit: a deposit record already confirmed, and its ledger entry. */
  async credit(tenantId: string, amountCents: Cents, reason: string): Promise<Deposit> {
    return this.storage.transaction(async (uow) => {
      await this.lockAccount(uow, tenantId);
      const now = this.clock.now();
      const deposit: Deposit = { id: this.ids.newId('dep'), tenantId, kind: 'credit', status: 'confirmed', amountCents, reference: null, reason, createdAt: now, decidedAt: now, sessionId: null, conflict: null };
      await uow.deposits.add(deposit);
      await this.post(uow, { tenantId, kind: 'credit', amountCents, reference: deposit.id, description: reason, uniqueKey: `deposit:${deposit.id}`, at: now });
      return deposit;
    });
  }

  /** A manual charge by an operator: it may take the balance below zero (the operator's call). */
  async charge(tenantId: string, amountCents: Cents, reason: string): Promise<LedgerEntry> {
    return this.storage.transaction(async (uow) => {
      await this.lockAccount(uow, tenantId);
      const id = this.ids.newId('chg');
      const entry = await this.post(uow, { tenantId, kind: 'charge', amountCents: -amountCents, reference: id, description: reason, uniqueKey: `charge:${id}`, at: this.clock.now() });
      return entry;
    });
  }

  private async decide(depositId: string, status: 'confirmed' | 'rejected'): Promise<Deposit> {
    return this.storage.transaction(async (uow) => {
      const deposit = await uow.deposits.lock(depositId);
      if (!deposit) throw notFound(`deposit ${depositId}`);
      if (deposit.status !== 'pending') {
        throw new DomainError('CONFLICT', `deposit ${depositId} is already ${deposit.status}; a deposit is decided once`);
      }
      // a card checkout is settled by the processor alone (an operator could credit money never paid, or
      // reject a payment that lands later); only a conflict the sweep recorded waits for an operator
      if (deposit.kind !== 'bank_transfer' && deposit.conflict === null) {
        throw new DomainError('CONFLICT', `deposit ${depositId} is a ${deposit.kind.replace('_', ' ')}, settled by the card processor; operators confirm or reject bank transfers only`);
      }
      const now = this.clock.now();
      if (status === 'confirmed') {
        await this.lockAccount(uow, deposit.tenantId);
        await this.post(uow, {
          tenantId: deposit.tenantId,
          kind: 'deposit',
          amountCents: deposit.amountCents,
          reference: deposit.id,
          description: deposit.reference,
          uniqueKey: `deposit:${deposit.id}`,
          at: now,
        });
      }
      await uow.deposits.decide(depositId, status, now);
      if (status === 'confirmed' || status === 'rejected') await uow.events.emit(depositEvent(deposit, status, now));
      return { ...deposit, status, decidedAt: now };
    });
  }

  /** Every posting here has a fresh key: finding it posted before would be a bug, not a retry. */
  private async post(uow: UnitOfWork, posting: LedgerPosting): Promise<LedgerEntry> {
    const entry = await postEntry(uow, this.ids, posting);
    if (!entry) throw new DomainError('CONFLICT', `${posting.uniqueKey} was posted before`);
    return entry;
  }

  private async lockAccount(uow: UnitOfWork, tenantId: string): Promise<Account> {
    const account = await uow.accounts.lock(tenantId, this.clock.now());
    if (!account) throw notFound(`tenant ${tenantId}`);
    return account;
  }

  private async view(uow: UnitOfWork, tenantId: string): Promise<AccountView> {
    const account = await uow.accounts.get(tenantId);
    if (!account) throw notFound(`tenant ${tenantId}`);
    const live = await uow.instances.live(tenantId);
    const unsettledUsageCents = await uow.usage.unsettledCents(tenantId);
    return { account, figures: accountFigures(account.balanceCents, live, this.clock.now(), { unsettledUsageCents }) };
  }
}
