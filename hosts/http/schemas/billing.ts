import { z } from 'zod';
import type { Deposit, LedgerEntry, PauseKind } from '../../../core/billing/account.ts';
import type { AccountView, OperatorAccountView } from '../../../core/billing/accounts/account-views.ts';
import type { BillingPeriod } from '../../../core/billing/periods.ts';
import type { SweepReport } from '../../../core/sweep/pass-report.ts';
import { BudgetOut, budgetOut } from './budget.ts';
import { dateTimeOut, exampleId, isoOrNull, queryInt, resourceId, usdAmount } from './common.ts';

const MAX_CENTS = 10_000_000; // 100,000 USD in one movement

export const DepositCreate = z
  .strictObject({
    amount_usd: usdAmount({ maxCents: MAX_CENTS }).meta({ description: 'USD, > 0 and at most 100000.' }),
    reference: z.string().trim().max(200).optional().meta({ description: 'Your transfer reference, shown to the operator.' }),
  })
  .meta({ id: 'DepositCreate', examples: [{ amount_usd: '500.00', reference: 'ACME-2026-11' }] });

export const CreditCreate = z
  .strictObject({ amount_usd: usdAmount({ maxCents: MAX_CENTS }), reason: z.string().trim().min(1, 'must not be blank').max(500) })
  .meta({ id: 'CreditCreate', examples: [{ amount_usd: '50.00', reason: 'first funds' }] });

export const ChargeCreate = z
  .strictObject({ tenant_id: resourceId('ten'), amount_usd: usdAmount({ maxCents: MAX_CENTS }), reason: z.string().trim().min(1, 'must not be blank').max(500) })
  .meta({ id: 'ChargeCreate', examples: [{ tenant_id: exampleId('ten'), amount_usd: '12.50', reason: 'support hours, November' }] });

export const HoldCreate = z.strictObject({ reason: z.string().trim().max(500).optional() }).meta({ id: 'HoldCreate', examples: [{ reason: 'chargeback under review' }] });
export const StopCreate = z.strictObject({ reason: z.string().trim().max(500).optional() }).meta({ id: 'StopCreate', examples: [{ reason: 'runaway job' }] });

export const DepositIdParams = z.object({ deposit_id: resourceId('dep') });
export const TenantIdParams = z.object({ tenant_id: resourceId('ten') });

export const OperatorDepositsQuery = z.strictObject({
  status: z.enum(['pending', 'confirmed', 'rejected', 'expired']).default('pending'),
});

export const LedgerQuery = z.strictObject({
  limit: queryInt(1, 1000, 'How many, newest first (default 500).').default(500),
});

export const SummaryQuery = z.strictObject({
  granularity: z.enum(['monthly', 'weekly']).default('monthly'),
  year: queryInt(2000, 2100, 'Only periods of this (UTC, ISO-week) year.').optional(),
  limit: LedgerQuery.shape.limit,
});

export const DepositOut = z
  .object({
    id: z.string(),
    tenant_id: z.string(),
    kind: z.enum(['bank_transfer', 'checkout', 'credit']),
    status: z.enum(['pending', 'confirmed', 'rejected', 'expired']),
    amount_cents: z.int(),
    reference: z.string().nullable(),
    reason: z.string().nullable(),
    created_at: dateTimeOut(),
    decided_at: dateTimeOut().nullable(),
    conflict: z.string().nullable().meta({ description: 'Why an operator must decide it: a card checkout the processor reports paid with another amount.' }),
  })
  .meta({ id: 'DepositOut' });

export const LedgerEntryOut = z
  .object({
    id: z.string(),
    kind: z.string().meta({ description: 'deposit, credit, rental_hour, usage, refund, charge, auto_recharge' }),
    amount_cents: z.int().meta({ description: 'Signed: money in is positive.' }),
    balance_after_cents: z.int(),
    reference: z.string().nullable(),
    description: z.string().nullable(),
    created_at: dateTimeOut(),
  })
  .meta({ id: 'LedgerEntryOut' });

export const BillingPeriodOut = z
  .object({
    period: z.string().meta({ description: '"2026-11" (monthly) or "2026-W47" (ISO week), UTC.' }),
    start: dateTimeOut(),
    end: dateTimeOut(),
    credits_cents: z.int(),
    debits_cents: z.int(),
    net_cents: z.int(),
    entries: z.int(),
  })
  .meta({ id: 'BillingPeriodOut' });

export const PauseOut = z
  .object({
    kind: z.enum(['emergency_stop', 'breaker', 'hold', 'budget']).meta({ description: 'budget: the monthly budget is spent and it stops there.' }),
    reason: z.string().nullable(),
    paused_at: dateTimeOut(),
    tenant_can_resume: z.boolean().meta({ description: 'false for an operator hold, which only an operator lifts.' }),
  })
  .meta({ id: 'PauseOut' });

export const AutoRechargeOut = z
  .object({
    enabled: z.boolean(),
    threshold_cents: z.int(),
    amount_cents: z.int(),
    last_error: z.string().nullable(),
    payments_last_24h: z.int(),
    max_payments_per_24h: z.int(),
  })
  .meta({ id: 'AutoRechargeOut' });

export const PaymentOptionsOut = z
  .object({ card: z.boolean().meta({ description: 'Card checkout is available.' }), bank_transfer: z.boolean() })
  .meta({ id: 'PaymentOptionsOut' });

const figures = {
  tenant_id: z.string(),
  balance_cents: z.int(),
  owed_cents: z.int().meta({ description: 'Usage that ran and is not yet paid.' }),
  available_cents: z.int().meta({ description: 'balance_cents - owed_cents: what new hours can be paid from.' }),
};

export const BalanceOut = z.object(figures).meta({ id: 'BalanceOut' });

export const AccountOut = z
  .object({
    ...figures,
    burn_cents_per_hour: z.int(),
    stops_at: dateTimeOut().nullable().meta({ description: 'When running machines stop if no funds are added.' }),
    paid_to_removal: z.boolean(),
    rentals: z.enum(['open', 'paused']),
    running_machines: z.int(),
    pause: PauseOut.nullable(),
    card: z.object({ brand: z.string(), last4: z.string() }).nullable().meta({ id: 'CardOut', description: 'The card saved by a checkout, used by auto-recharge; null: none.' }),
    auto_recharge: AutoRechargeOut,
    payments: PaymentOptionsOut,
    budget: BudgetOut.nullable().meta({ description: 'The monthly budget and this month\'s spend against it; null: none set.' }),
  })
  .meta({ id: 'AccountOut' });

export const OperatorAccountOut = z
  .object({
    ...figures,
    burn_cents_per_hour: z.int(),
    running_machines: z.int(),
    rentals: z.enum(['open', 'paused']),
    breaker: PauseOut.nullable().meta({ description: 'Why renting is paused, if it is.' }),
    pending_deposits: z.int().meta({ description: 'Fund requests waiting for a decision.' }),
  })
  .meta({ id: 'OperatorAccountOut' });

export const depositOut = (d: Deposit): z.input<typeof DepositOut> => ({
  id: d.id,
  tenant_id: d.tenantId,
  kind: d.kind,
  status: d.status,
  amount_cents: d.amountCents,
  reference: d.reference,
  reason: d.reason,
  created_at: d.createdAt.toISOString(),
  decided_at: isoOrNull(d.decidedAt),
  conflict: d.conflict,
});

export const ledgerEntryOut = (e: LedgerEntry): z.input<typeof LedgerEntryOut> => ({
  id: e.id,
  kind: e.kind,
  amount_cents: e.amountCents,
  balance_after_cents: e.balanceAfterCents,
  reference: e.reference,
  description: e.description,
  created_at: e.createdAt.toISOString(),
});

export const billingPeriodOut = (p: BillingPeriod): z.input<typeof BillingPeriodOut> => ({
  period: p.period,
  start: p.start.toISOString(),
  end: p.end.toISOString(),
  credits_cents: p.creditsCents,
  debits_cents: p.debitsCents,
  net_cents: p.netCents,
  entries: p.entries,
});

const pauseOut = (view: Pick<AccountView, 'account'>): z.input<typeof PauseOut> | null =>
  view.account.pause
    ? { kind: view.account.pause.kind, reason: view.account.pause.reason, paused_at: view.account.pause.at.toISOString(), tenant_can_resume: view.account.pause.kind !== 'hold' }
    : null;

export const balanceOut = ({ account, figures: f }: Pick<AccountView, 'account' | 'figures'>): z.input<typeof BalanceOut> => ({
  tenant_id: account.tenantId,
  balance_cents: f.balanceCents,
  owed_cents: f.owedCents,
  available_cents: f.availableCents,
});

/** What the account view needs besides the account itself: payment facts from the payments service. */
export interface PaymentFacts {
  maxPaymentsPer24h: number;
  paymentsLast24h: number;
}

export const accountOut = (view: AccountView, facts: PaymentFacts): z.input<typeof AccountOut> => ({
  ...balanceOut(view),
  burn_cents_per_hour: view.figures.burnCentsPerHour,
  stops_at: isoOrNull(view.figures.stopsAt),
  paid_to_removal: view.figures.paidToRemoval,
  rentals: view.account.pause ? 'paused' : 'open',
  running_machines: view.figures.runningMachines,
  pause: pauseOut(view),
  card: view.account.card ? { brand: view.account.card.brand, last4: view.account.card.last4 } : null,
  auto_recharge: {
    enabled: view.account.autoRecharge.enabled,
    threshold_cents: view.account.autoRecharge.thresholdCents,
    amount_cents: view.account.autoRecharge.amountCents,
    last_error: view.account.autoRecharge.lastError,
    payments_last_24h: facts.paymentsLast24h,
    max_payments_per_24h: facts.maxPaymentsPer24h,
  },
  // a card processor is always configured: Stripe, or the embedded one by default
  payments: { card: true, bank_transfer: true },
  budget: view.budget ? budgetOut(view.budget) : null,
});

export const operatorAccountOut = (view: OperatorAccountView): z.input<typeof OperatorAccountOut> => ({
  ...balanceOut(view),
  burn_cents_per_hour: view.figures.burnCentsPerHour,
  running_machines: view.figures.runningMachines,
  rentals: view.account.pause ? 'paused' : 'open',
  breaker: pauseOut(view),
  pending_deposits: view.pendingDeposits,
});

export const StopOut = z
  .object({
    rentals: z.literal('paused'),
    pause: PauseOut,
    terminated: z.array(z.string()).meta({ description: 'Instances stopped by this call (disks deleted, volumes kept).' }),
  })
  .meta({ id: 'StopOut' });

export const SweepOut = z
  .object({
    ran: z.boolean().meta({ description: 'false: another runner held the money steps (they ran there); only the start steps, shared work, ran here.' }),
    at: dateTimeOut(),
    blocks_paid: z.int(),
    removals: z.int(),
    breakers_tripped: z.int(),
    adopted: z.int(),
    failed_provisioning: z.int(),
    gone_upstream: z.int(),
    orphans_terminated: z.int(),
    terminations_retried: z.int(),
    preempted: z.int().meta({ description: 'Spot machines found preempted: billed to the started minute, the rest of their block refunded.' }),
    volumes_adopted: z.int().meta({ description: 'Volumes whose create had no answer, found at their provider by their label and adopted (billed from their creation).' }),
    volumes_failed: z.int().meta({ description: 'Volumes whose create had no answer and that the provider never made by the deadline: failed, nothing billed.' }),
    volume_orphans_deleted: z.int().meta({ description: 'Volumes at a provider carrying one of our volume ids that nobody pays for, deleted there.' }),
    volumes_expired: z.int().meta({ description: 'Volumes whose window (hours) ended, deleted at their provider.' }),
    checkouts_settled: z.int().meta({ description: 'Card checkouts settled by asking the processor (missed webhooks).' }),
    usage_settled: z.int().meta({ description: 'Usage records posted to the ledger.' }),
    volume_hours_recorded: z.int().meta({ description: 'Hours of volume storage recorded as usage.' }),
    reservations_started: z.int().meta({ description: 'Reservations whose start came and that were rented.' }),
    reservations_failed: z.int().meta({ description: 'Reservations that could not be rented at their start (nothing charged; see their failure).' }),
    spot_claims_rented: z.int().meta({ description: 'Spot machines rented for pending spot claims.' }),
    spot_claims_expired: z.int().meta({ description: 'Spot claims whose hours ended (their machine removed).' }),
    idle_timeouts: z.int().meta({ description: 'Tokens ended by their dead-man switch (idle_timeout_minutes), each with what was rented under it.' }),
    quotes_pruned: z.int().meta({ description: 'Unused quotes a day past their expiry, deleted (renting by one answers 404 from then on).' }),
    reservations_cancelled: z.int().meta({ description: 'Scheduled reservations cancelled because the token that made them, or one that issued it, expired (their commitments given back).' }),
    machines_recovered: z.int().meta({ description: 'Replacements rented for machines with managed recovery that were lost, preempted or failed at their provider.' }),
    recoveries_failed: z.int().meta({ description: 'Machines with managed recovery that could not be replaced (see their recovery.failure).' }),
    auto_recharge: z.object({ attempted: z.int(), succeeded: z.int(), failed: z.int() }),
    conflicts: z.array(z.string()).meta({ description: 'Items left for an operator (a checkout paid with another amount: see GET /v1/operator/deposits).' }),
    errors: z.array(z.string()).meta({ description: 'Items that failed this pass and are retried next pass; the others carried on.' }),
    lock_lost: z.boolean().meta({ description: 'The pass lost its lock and stopped before its next step.' }),
    steps: z
      .array(
        z.object({
          name: z.string().meta({ description: '`reconcile <provider>`, `removals`, `hour blocks`, ..., then `reservations`, `spot-claims` and `recoveries` (side by side).' }),
          started_ms: z.int().meta({ description: 'Real milliseconds into the pass when the step began.' }),
          duration_ms: z.int(),
        }),
      )
      .meta({ description: 'Each step that ran, in real time: the money steps first, then the starts.' }),
    duration_ms: z.int().meta({ description: 'The whole pass, in real milliseconds.' }),
    calls_cut: z.int().meta({ description: 'Calls to providers this process stopped waiting for at their deadline during the pass (a cut create is settled by the reconciler).' }),
    starts_left_running: z.int().meta({ description: 'Starts still waiting on their cloud when the pass budget ended; they finish by themselves.' }),
    oldest_due_start_seconds: z
      .int()
      .nullable()
      .meta({ description: 'At the end of the pass: how long the oldest due start not yet taken (a reservation past starts_at, a spot claim never tried, a machine to recover) has waited; null: none.' }),
  })
  .meta({ id: 'SweepOut' });

export const stopOut = (stopped: { pause: { kind: PauseKind; reason: string | null; at: Date }; terminated: string[] }): z.input<typeof StopOut> => ({
  rentals: 'paused',
  pause: { kind: stopped.pause.kind, reason: stopped.pause.reason, paused_at: stopped.pause.at.toISOString(), tenant_can_resume: stopped.pause.kind !== 'hold' },
  terminated: stopped.terminated,
});

export const sweepOut = (r: SweepReport): z.input<typeof SweepOut> => ({
  ran: r.ran,
  at: r.at.toISOString(),
  blocks_paid: r.blocksPaid,
  removals: r.removals,
  breakers_tripped: r.breakersTripped,
  adopted: r.adopted,
  failed_provisioning: r.failedProvisioning,
  gone_upstream: r.goneUpstream,
  orphans_terminated: r.orphansTerminated,
  terminations_retried: r.terminationsRetried,
  preempted: r.preempted,
  volumes_adopted: r.volumesAdopted,
  volumes_failed: r.volumesFailed,
  volume_orphans_deleted: r.volumeOrphansDeleted,
  volumes_expired: r.volumesExpired,
  checkouts_settled: r.checkoutsSettled,
  usage_settled: r.usageSettled,
  volume_hours_recorded: r.volumeHoursRecorded,
  reservations_started: r.reservationsStarted,
  reservations_failed: r.reservationsFailed,
  spot_claims_rented: r.spotClaimsRented,
  spot_claims_expired: r.spotClaimsExpired,
  idle_timeouts: r.idleTimeouts,
  quotes_pruned: r.quotesPruned,
  reservations_cancelled: r.reservationsCancelled,
  machines_recovered: r.machinesRecovered,
  recoveries_failed: r.recoveriesFailed,
  auto_recharge: { attempted: r.autoRecharge.attempted, succeeded: r.autoRecharge.succeeded, failed: r.autoRecharge.failed },
  conflicts: r.conflicts,
  errors: r.errors,
  lock_lost: r.lockLost,
  steps: r.steps.map((step) => ({ name: step.name, started_ms: step.startedMs, duration_ms: step.durationMs })),
  duration_ms: r.durationMs,
  calls_cut: r.callsCut,
  starts_left_running: r.startsLeftRunning,
  oldest_due_start_seconds: r.oldestDueStartSeconds,
});

export const CheckoutCreate = z
  .strictObject({ amount_usd: usdAmount({ maxCents: MAX_CENTS }).meta({ description: 'USD, > 0 and at most 100000.' }) })
  .meta({ id: 'CheckoutCreate', examples: [{ amount_usd: '100.00' }] });

export const CheckoutOut = z
  .object({
    session_id: z.string(),
    url: z.string().meta({ description: 'Send the payer here; the balance grows once the processor reports the payment.' }),
    amount_cents: z.int(),
    status: z.enum(['pending', 'confirmed', 'rejected', 'expired']),
    deposit_id: z.string(),
  })
  .meta({ id: 'CheckoutOut' });

const autoRechargeAmount = () =>
  usdAmount({ maxCents: MAX_CENTS }).nullable().optional().meta({ description: 'USD, > 0 and at most 100000; null or absent keeps the current value.' });

export const AutoRechargeUpdate = z
  .strictObject({ enabled: z.boolean(), threshold_usd: autoRechargeAmount(), amount_usd: autoRechargeAmount() })
  .meta({ id: 'AutoRechargeUpdate', examples: [{ enabled: true, threshold_usd: '20.00', amount_usd: '100.00' }] });

export const SessionIdParams = z.object({
  session_id: z.string().min(1).max(255).regex(/^[A-Za-z0-9_]+$/, 'must be a checkout session id').meta({ examples: ['mcs_3f9a0c2e7b1d4a6f8e20'] }),
});
