import { DomainError, invalidInput, notFound, upstreamUnavailable } from '../errors.ts';
import { postEntry } from './ledger.ts';
import type { Cents } from '../money.ts';
import type { Clock } from '../ports/clock.ts';
import type { Ids } from '../ports/ids.ts';
import { InvalidWebhook, type CheckoutState, type Payments } from '../ports/payments.ts';
import type { Storage } from '../ports/storage.ts';
import type { AutoRecharge, AutoRechargePayment, Deposit } from './account.ts';
import { accountFigures, hasUnpaidBlockDue } from './account-view.ts';
import { isolated } from './isolated.ts';
import { autoRechargeFailedEvent, depositEvent } from '../events/account-events.ts';

const DAY_MS = 86_400_000;
/**
 * Processors keep idempotency keys for about a day (Stripe: 24 h): an attempt still without an answer
 * after this long is not sent again (it could charge twice); it is closed and the tenant told.
 */
const STALE_ATTEMPT_MS = 23 * 3_600_000;

export interface PaymentSettings {
  /** Auto-recharge payments allowed in any rolling 24 hours. */
  maxPaymentsPer24h: number;
  /** Where the processor sends the payer back; the session id is appended by the host. */
  successUrl: string;
  cancelUrl: string;
}

export interface CheckoutStarted {
  deposit: Deposit;
  url: string;
}

export interface AutoRechargeUpdate {
  enabled: boolean;
  thresholdCents?: Cents | null;
  amountCents?: Cents | null;
}

/** What the sweep's catch-up of checkouts settled, and the conflicts it left for an operator. */
export interface CheckoutReport {
  settled: number;
  conflicts: string[];
  errors: string[];
}

export interface AutoRechargeReport {
  attempted: number;
  succeeded: number;
  failed: number;
  /** Accounts or attempts that failed this pass; the others carried on. */
  errors: string[];
}


/**
 * Card money in: checkout sessions that credit once when the processor says they are paid (through the
 * webhook, the sync route, or both, in any order), the saved card, and auto-recharge with its 24-hour cap.
 */
export class PaymentsService {
  private readonly storage: Storage;
  private readonly clock: Clock;
  private readonly ids: Ids;
  private readonly payments: Payments;
  readonly settings: PaymentSettings;

  constructor(deps: { storage: Storage; clock: Clock; ids: Ids; payments: Payments; settings: PaymentSettings }) {
    this.storage = deps.storage;
    this.clock = deps.clock;
    this.ids = deps.ids;
    this.payments = deps.payments;
    this.settings = deps.settings;
  }

  get processor(): string {
    return this.payments.name;
  }

  /** A checkout for `amountCents`: a pending deposit now, credited when the processor reports it paid. */
  async checkout(tenantId: string, amountCents: Cents): Promise<CheckoutStarted> {
    const now = this.clock.now();
    const deposit: Deposit = {
      id: this.ids.newId('dep'),
      tenantId,
      kind: 'checkout',
      status: 'pending',
      amountCents,
      reference: null,
      reason: null,
      createdAt: now,
      decidedAt: null,
      sessionId: null,
      conflict: null,
    };
    const customerId = await this.storage.transaction(async (uow) => {
      const account = await uow.accounts.lock(tenantId, now);
      if (!account) throw notFound(`tenant ${tenantId}`);
      await uow.deposits.add(deposit);
      return account.paymentCustomerId;
    });
    let created;
    try {
      created = await this.payments.createCheckout({
        depositId: deposit.id,
        tenantId,
        amountCents,
        customerId,
        successUrl: this.settings.successUrl,
        cancelUrl: this.settings.cancelUrl,
      });
    } catch (error) {
      await this.storage.transaction((uow) => uow.deposits.decide(deposit.id, 'expired', this.clock.now()));
      throw upstreamUnavailable('the card processor did not open a checkout', error, 'nothing was charged');
    }
    await this.storage.transaction(async (uow) => {
      await uow.deposits.attachSession(deposit.id, created.sessionId);
      if (created.customerId && created.customerId !== customerId) {
        const account = await uow.accounts.lock(tenantId, now);
        await uow.accounts.setCard(tenantId, created.customerId, account?.card ?? null);
      }
    });
    return { deposit: { ...deposit, sessionId: created.sessionId }, url: created.url };
  }

  /** Asks the processor how a checkout went (the payer came back) and settles it. */
  async sync(tenantId: string, sessionId: string): Promise<Deposit> {
    const deposit = await this.storage.transaction((uow) => uow.deposits.lockBySession(sessionId));
    if (!deposit || deposit.tenantId !== tenantId) throw notFound(`checkout session ${sessionId}`);
    if (deposit.status !== 'pending') return deposit;
    let state: CheckoutState | null;
    try {
      state = await this.payments.getCheckout(sessionId);
    } catch (error) {
      throw upstreamUnavailable('the card processor did not answer', error, 'try again');
    }
    return state ? this.settle(state) : deposit;
  }

  /** A webhook delivery: verified over the raw body, then settled like a sync. */
  async webhook(rawBody: Buffer, signature: string | undefined): Promise<{ handled: string }> {
    let event;
    try {
      event = this.payments.parseWebhook(rawBody, signature, this.clock.now());
    } catch (error) {
      if (error instanceof InvalidWebhook) throw new DomainError('WEBHOOK_INVALID', `webhook refused: ${error.message}`);
      throw error;
    }
    if (event.kind === 'ignored') return { handled: `ignored ${event.type}` };
    // the event says what happened; the session itself, asked back, says it with authority
    let state: CheckoutState | null;
    try {
      state = await this.payments.getCheckout(event.sessionId);
    } catch (error) {
      // 503: the processor delivers the event again later, and the sweep asks about the session anyway
      throw upstreamUnavailable('the card processor did not answer about the session', error, 'deliver the event again');
    }
    if (state) await this.settle(state);
    return { handled: event.kind };
  }

  /** Settles a session from what the processor says of it now (the embedded page, the sweep). */
  async settleSession(sessionId: string): Promise<Deposit | null> {
    const state = await this.payments.getCheckout(sessionId);
    return state ? this.settle(state) : null;
  }

  /**
   * The sweep's catch-up for missed webhooks: every pending checkout is asked about once per pass. One
   * checkout's failure is recorded and the others carry on; a conflict is left for an operator.
   */
  async settlePendingCheckouts(): Promise<CheckoutReport> {
    const report: CheckoutReport = { settled: 0, conflicts: [], errors: [] };
    const pending = await this.storage.read((uow) => uow.deposits.pendingCheckouts());
    for (const deposit of pending) {
      if (!deposit.sessionId) continue; // its session is still being opened
      const sessionId = deposit.sessionId;
      await isolated(report.errors, `checkout ${sessionId}`, async () => {
        const state = await this.payments.getCheckout(sessionId);
        if (!state || state.status === 'open') return;
        const settled = await this.settle(state);
        if (settled.conflict) report.conflicts.push(`deposit ${settled.id}: ${settled.conflict}`);
        else if (settled.status !== 'pending') report.settled++;
      });
    }
    return report;
  }

  /** Credits a paid session once (the deposit's lock and its ledger key make a second credit impossible). */
  private async settle(state: CheckoutState): Promise<Deposit> {
    return this.storage.transaction(async (uow) => {
      const deposit = await uow.deposits.lockBySession(state.sessionId);
      if (!deposit) throw notFound(`checkout session ${state.sessionId}`);
      if (deposit.status !== 'pending' || state.status === 'open') return deposit;
      const now = this.clock.now();
      if (state.status === 'expired') {
        await uow.deposits.decide(deposit.id, 'expired', now);
        return { ...deposit, status: 'expired', decidedAt: now };
      }
      if (state.amountCents !== deposit.amountCents) {
        // never credit a guess: the deposit waits for an operator, who sees it in the fund-request queue
        const conflict = `the processor reports checkout ${state.sessionId} paid ${state.amountCents} cents for a deposit of ${deposit.amountCents}; an operator confirms or rejects it`;
        if (deposit.conflict !== conflict) await uow.deposits.recordConflict(deposit.id, conflict);
        return { ...deposit, conflict };
      }
      const account = await uow.accounts.lock(deposit.tenantId, now);
      await postEntry(uow, this.ids, { tenantId: deposit.tenantId, kind: 'deposit', amountCents: deposit.amountCents, reference: deposit.id, description: 'card payment', uniqueKey: `deposit:${deposit.id}`, at: now });
      await uow.deposits.decide(deposit.id, 'confirmed', now);
      await uow.events.emit(depositEvent(deposit, 'confirmed', now));
      if (state.card) {
        await uow.accounts.setCard(deposit.tenantId, state.customerId, state.card);
        // a new card lifts a suspension left by a failed auto-recharge
        if (account) await uow.accounts.setAutoRecharge(deposit.tenantId, { ...account.autoRecharge, suspended: false, lastError: null });
      }
      return { ...deposit, status: 'confirmed', decidedAt: now };
    });
  }

  async setAutoRecharge(tenantId: string, update: AutoRechargeUpdate): Promise<void> {
    await this.storage.transaction(async (uow) => {
      const account = await uow.accounts.lock(tenantId, this.clock.now());
      if (!account) throw notFound(`tenant ${tenantId}`);
      const threshold = update.thresholdCents ?? account.autoRecharge.thresholdCents;
      const amount = update.amountCents ?? account.autoRecharge.amountCents;
      if (update.enabled) {
        if (!account.card) throw new DomainError('CONFLICT', 'no saved card: pay once by card (POST /v1/billing/checkout) to save one, then turn auto-recharge on');
        if (threshold <= 0) throw invalidInput(['body', 'threshold_usd'], 'required to turn auto-recharge on');
        if (amount <= 0) throw invalidInput(['body', 'amount_usd'], 'required to turn auto-recharge on');
      }
      const settings: AutoRecharge = { enabled: update.enabled, thresholdCents: threshold, amountCents: amount, lastError: null, suspended: false };
      await uow.accounts.setAutoRecharge(tenantId, settings);
    });
  }

  /** Forgets the saved card at the processor and here; auto-recharge turns off. */
  async forgetCard(tenantId: string): Promise<void> {
    const account = await this.storage.read((uow) => uow.accounts.get(tenantId));
    if (!account) throw notFound(`tenant ${tenantId}`);
    if (account.card) {
      try {
        await this.payments.detachCard(account.card.paymentMethodId);
      } catch (error) {
        throw upstreamUnavailable('the card processor did not answer', error, 'the card is still saved, try again');
      }
    }
    await this.storage.transaction(async (uow) => {
      const locked = await uow.accounts.lock(tenantId, this.clock.now());
      if (!locked) return;
      await uow.accounts.setCard(tenantId, null, null);
      await uow.accounts.setAutoRecharge(tenantId, { ...locked.autoRecharge, enabled: false, suspended: false });
    });
  }

  async paymentsLast24h(tenantId: string): Promise<number> {
    const since = new Date(this.clock.now().getTime() - DAY_MS);
    return this.storage.read((uow) => uow.autoRecharges.countSince(tenantId, since));
  }

  /**
   * The sweep's auto-recharge step: for each account under its threshold, one payment per trigger,
   * however many sweeps overlap (a pending attempt is a claim only one can hold), at most
   * `maxPaymentsPer24h` in any rolling 24 hours; a failure is recorded and not retried until the tenant
   * acts (updates auto-recharge or saves a card).
   */
  async runAutoRecharge(): Promise<AutoRechargeReport> {
    const report: AutoRechargeReport = { attempted: 0, succeeded: 0, failed: 0, errors: [] };
    // attempts that got no answer last time: asked again with the same idempotency key, never a new payment
    for (const pending of await this.storage.read((uow) => uow.autoRecharges.pending())) {
      await isolated(report.errors, `auto-recharge attempt ${pending.id}`, async () => {
        if (this.clock.now().getTime() - pending.createdAt.getTime() > STALE_ATTEMPT_MS) {
          await this.abandon(pending);
          return;
        }
        const account = await this.storage.read((uow) => uow.accounts.get(pending.tenantId));
        if (account?.card && account.paymentCustomerId) {
          await this.attempt({ payment: pending, customerId: account.paymentCustomerId, paymentMethodId: account.card.paymentMethodId }, report);
        }
      });
    }
    const candidates = await this.storage.read((uow) => uow.autoRecharges.candidates(this.clock.now()));
    for (const tenantId of candidates) {
      await isolated(report.errors, `auto-recharge of ${tenantId}`, () => this.recharge(tenantId, report));
    }
    return report;
  }

  /**
   * One account's recharge, when it needs one: available funds under the threshold, or an hour block due
   * that the balance could not pay (the machine would otherwise run on credit into the breaker).
   */
  private async recharge(tenantId: string, report: AutoRechargeReport): Promise<void> {
    const claim = await this.storage.transaction(async (uow) => {
      const now = this.clock.now();
      const account = await uow.accounts.lock(tenantId, now);
      const settings = account?.autoRecharge;
      if (!account || !settings?.enabled || settings.suspended || !account.card || !account.paymentCustomerId) return null;
      const live = await uow.instances.live(tenantId);
      const figures = accountFigures(account.balanceCents, live, now, { stopsAt: false, unsettledUsageCents: await uow.usage.unsettledCents(tenantId) });
      if (figures.availableCents >= settings.thresholdCents && !live.some((i) => hasUnpaidBlockDue(i, now))) return null;
      const recent = await uow.autoRecharges.countSince(tenantId, new Date(now.getTime() - DAY_MS));
      if (recent >= this.settings.maxPaymentsPer24h) {
        const lastError = `the limit of ${this.settings.maxPaymentsPer24h} automatic payments in 24 hours is reached`;
        if (settings.lastError !== lastError) await uow.accounts.setAutoRecharge(tenantId, { ...settings, lastError });
        return null;
      }
      const payment = { id: this.ids.newId('arp'), tenantId, amountCents: settings.amountCents, status: 'pending' as const, error: null, createdAt: now };
      if (!(await uow.autoRecharges.claim(payment))) return null;
      return { payment, customerId: account.paymentCustomerId, paymentMethodId: account.card.paymentMethodId };
    });
    if (claim) await this.attempt(claim, report);
  }

  private async abandon(payment: AutoRechargePayment): Promise<void> {
    const error = `no answer from the card processor for attempt ${payment.id} within 23 hours; check the processor's dashboard before turning auto-recharge on again`;
    await this.storage.transaction(async (uow) => {
      const now = this.clock.now();
      const account = await uow.accounts.lock(payment.tenantId, now);
      await uow.autoRecharges.decide(payment.id, 'failed', error, now);
      if (account) await uow.accounts.setAutoRecharge(payment.tenantId, { ...account.autoRecharge, lastError: error, suspended: true });
      await uow.events.emit(autoRechargeFailedEvent(payment, error, now));
    });
  }

  /** Charges a claimed attempt and records the outcome; no answer leaves it pending for the next sweep. */
  private async attempt(claim: { payment: AutoRechargePayment; customerId: string; paymentMethodId: string }, report: AutoRechargeReport): Promise<void> {
    report.attempted++;
    let outcome;
    try {
      outcome = await this.payments.chargeOffSession({
        customerId: claim.customerId,
        paymentMethodId: claim.paymentMethodId,
        amountCents: claim.payment.amountCents,
        idempotencyKey: `auto-recharge:${claim.payment.id}`,
      });
    } catch {
      report.failed++;
      return;
    }
    const tenantId = claim.payment.tenantId;
    await this.storage.transaction(async (uow) => {
      const now = this.clock.now();
      const account = await uow.accounts.lock(tenantId, now);
      if (!account) return;
      if (outcome.ok) {
        await postEntry(uow, this.ids, { tenantId, kind: 'auto_recharge', amountCents: claim.payment.amountCents, reference: outcome.paymentId, description: 'automatic card payment', uniqueKey: `auto-recharge:${claim.payment.id}`, at: now });
        await uow.autoRecharges.decide(claim.payment.id, 'succeeded', null, now);
        if (account.autoRecharge.lastError) await uow.accounts.setAutoRecharge(tenantId, { ...account.autoRecharge, lastError: null });
      } else {
        await uow.autoRecharges.decide(claim.payment.id, 'failed', outcome.reason, now);
        await uow.accounts.setAutoRecharge(tenantId, { ...account.autoRecharge, lastError: outcome.reason, suspended: true });
        await uow.events.emit(autoRechargeFailedEvent(claim.payment, outcome.reason, now));
      }
    });
    if (outcome.ok) report.succeeded++;
    else report.failed++;
  }

}
