import type { LedgerKind } from '../billing/account.ts';

/**
 * How a rental ended up failed (refunded in full): the provider refused the create, or its machine never ran
 * (none showed before the provisioning deadline, or the provider failed or lost it first).
 */
export type RentalFailure = 'refused' | 'never_started' | 'abandoned';

/** How one call to a provider went: answered, or failed (ProviderFailure kinds, `error` for anything else). */
export type ProviderCallOutcome = 'ok' | 'rejected' | 'ambiguous' | 'unavailable' | 'error';

/**
 * How one webhook delivery attempt went: the receiver answered 2xx (`delivered`), answered otherwise or could
 * not be reached (`failed`, retried later), was refused before sending (`blocked`: a private address after DNS),
 * or its endpoint was disabled after a day of failures (`disabled`).
 */
export type WebhookOutcome = 'delivered' | 'failed' | 'blocked' | 'disabled';

/** What one sweep pass did, as counts of items per kind (`blocks_paid`, `removals`...). */
export interface SweepPassOutcome {
  /** false when another runner held the sweep. */
  ran: boolean;
  lockLost: boolean;
  /** The database did not answer when the pass began: the pass was skipped, nothing done. */
  databaseUnavailable?: boolean;
  errors: number;
  items: Readonly<Record<string, number>>;
  /** How long the oldest start that is due (a reservation past starts_at, a claim never tried) has waited to be taken, in seconds; null: none waits. */
  oldestDueStartSeconds: number | null;
}

/** A pass being timed: each step's end and the pass's end are told once. Timing is the adapter's (real time). */
export interface SweepPassTimer {
  /** Called when step `name` starts; the function it answers is called when the step ends. */
  step(name: string): () => void;
  finished(outcome: SweepPassOutcome): void;
}

/**
 * What the control plane tells its operators' monitoring (GET /metrics): the core and the adapters call it
 * at each event, the adapter behind it (Prometheus) counts. Every method is cheap and never throws.
 * Label values are bounded: provider names, ledger kinds, sweep step names, fixed outcomes.
 */
export interface Metrics {
  /** A rental was committed (first hour charged) and its machine asked of the provider. */
  rentalCreated(provider: string): void;
  rentalFailed(provider: string, reason: RentalFailure): void;
  sweepPassStarted(): SweepPassTimer;
  /** One call to a provider's API, as seen at the provider port. */
  providerCall(provider: string, operation: string, seconds: number, outcome: ProviderCallOutcome): void;
  /** A call to a provider that the core stopped waiting for at its deadline (core/upstream/call-deadlines.ts). */
  providerCallCut(provider: string, operation: string): void;
  /** `entries` ledger entries of one kind and sign committed, moving `amountCents` in all (signed, money in positive). */
  ledgerPosted(kind: LedgerKind, amountCents: number, entries: number): void;
  /**
   * A webhook delivery attempt starts; call what it answers once the attempt is decided, with the receiver's
   * HTTP status when it answered. The time between is the attempt's latency.
   */
  webhookDeliveryStarted(): (outcome: WebhookOutcome, responseStatus: number | null) => void;
}

const NO_TIMER: SweepPassTimer = { step: () => () => undefined, finished: () => undefined };

/** Counts nothing: for services built without monitoring (tests, embedding programs). */
export const NO_METRICS: Metrics = {
  rentalCreated: () => undefined,
  rentalFailed: () => undefined,
  sweepPassStarted: () => NO_TIMER,
  providerCall: () => undefined,
  providerCallCut: () => undefined,
  ledgerPosted: () => undefined,
  webhookDeliveryStarted: () => () => undefined,
};
