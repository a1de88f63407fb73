import { performance } from 'node:perf_hooks';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { LedgerKind } from '../../core/billing/account.ts';
import type { Metrics, ProviderCallOutcome, RentalFailure, SweepPassOutcome, SweepPassTimer, WebhookOutcome } from '../../core/ports/metrics.ts';
import { HttpSeries } from './http-series.ts';

/** From a cached search (~0.2 ms) to a rental waiting on a cloud (seconds). */
const HTTP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Upstream APIs and webhook receivers: tens of milliseconds to the 10 s timeouts. */
const CALL_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** A pass is seconds; one starting thousands of reservations, minutes. */
const SWEEP_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

const seconds = (startedAt: number): number => (performance.now() - startedAt) / 1000;

const statusClass = (status: number | null): string => (status === null ? 'none' : `${Math.floor(status / 100)}xx`);

/**
 * The Metrics port in Prometheus's text format (prom-client), plus what the HTTP host observes. Each instance
 * has its own registry, so two control planes in one process (tests) count apart.
 */
export class PrometheusMetrics implements Metrics {
  readonly registry = new Registry();
  private readonly http: HttpSeries;
  private readonly rentalsCreated: Counter<'provider'>;
  private readonly rentalsFailed: Counter<'provider' | 'reason'>;
  private readonly sweepPasses: Counter<'outcome'>;
  private readonly sweepDuration: Histogram;
  private readonly sweepStepDuration: Histogram<'step'>;
  private readonly sweepItems: Counter<'item'>;
  private readonly sweepErrors: Counter;
  private readonly oldestDueStart: Gauge;
  private readonly providerCalls: Counter<'provider' | 'operation' | 'outcome'>;
  private readonly providerErrors: Counter<'provider' | 'operation' | 'kind'>;
  private readonly providerDuration: Histogram<'provider' | 'operation'>;
  private readonly providerCuts: Counter<'provider' | 'operation'>;
  private readonly ledgerEntries: Counter<'kind'>;
  private readonly ledgerCents: Counter<'kind' | 'direction'>;
  private readonly webhookDeliveries: Counter<'outcome' | 'status_class'>;
  private readonly webhookDuration: Histogram<'outcome'>;

  constructor(options: { defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry });
    this.http = new HttpSeries(this.registry, HTTP_BUCKETS);
    this.rentalsCreated = new Counter({ name: 'rentals_created_total', help: 'Rentals committed (first hour charged) and asked of their provider', labelNames: ['provider'], registers });
    this.rentalsFailed = new Counter({
      name: 'rentals_failed_total',
      help: 'Rentals failed and refunded: the provider refused the machine (refused), or it never ran (never_started), or its create died with its process (abandoned)',
      labelNames: ['provider', 'reason'],
      registers,
    });
    this.sweepPasses = new Counter({ name: 'sweep_passes_total', help: 'Billing sweep passes: ran, skipped (another runner held it), lock_lost, database_unavailable (the pass was skipped)', labelNames: ['outcome'], registers });
    this.sweepDuration = new Histogram({ name: 'sweep_pass_duration_seconds', help: 'Duration of billing sweep passes that ran', buckets: SWEEP_BUCKETS, registers });
    this.sweepStepDuration = new Histogram({ name: 'sweep_step_duration_seconds', help: 'Duration of each step of a sweep pass', labelNames: ['step'], buckets: SWEEP_BUCKETS, registers });
    this.sweepItems = new Counter({ name: 'sweep_items_total', help: 'What sweep passes did, by item (blocks_paid, removals, breakers_tripped...)', labelNames: ['item'], registers });
    this.sweepErrors = new Counter({ name: 'sweep_errors_total', help: 'Items that failed in a sweep pass (retried next pass)', registers });
    this.oldestDueStart = new Gauge({
      name: 'sweep_oldest_due_start_seconds',
      help: 'At the end of the last pass: how long the oldest due start (reservation past starts_at, spot claim never tried) has waited to be taken; 0 when none waits',
      registers,
    });
    this.providerCalls = new Counter({ name: 'provider_calls_total', help: 'Calls to provider APIs, by provider, operation and outcome', labelNames: ['provider', 'operation', 'outcome'], registers });
    this.providerErrors = new Counter({ name: 'provider_call_errors_total', help: 'Failed calls to provider APIs, by provider, operation and kind of failure', labelNames: ['provider', 'operation', 'kind'], registers });
    this.providerDuration = new Histogram({ name: 'provider_call_duration_seconds', help: 'Latency of calls to provider APIs', labelNames: ['provider', 'operation'], buckets: CALL_BUCKETS, registers });
    this.providerCuts = new Counter({
      name: 'provider_calls_cut_total',
      help: 'Calls to provider APIs the control plane stopped waiting for at their deadline (a create cut is settled by the reconciler)',
      labelNames: ['provider', 'operation'],
      registers,
    });
    this.ledgerEntries = new Counter({ name: 'ledger_entries_total', help: 'Ledger entries committed, by kind', labelNames: ['kind'], registers });
    this.ledgerCents = new Counter({
      name: 'ledger_amount_cents_total',
      help: 'Cents moved by committed ledger entries, by kind and direction (credit: money in, debit: money out)',
      labelNames: ['kind', 'direction'],
      registers,
    });
    this.webhookDeliveries = new Counter({
      name: 'webhook_deliveries_total',
      help: 'Webhook delivery attempts, by outcome and the receiver status class (none: no answer)',
      labelNames: ['outcome', 'status_class'],
      registers,
    });
    this.webhookDuration = new Histogram({ name: 'webhook_delivery_duration_seconds', help: 'Latency of webhook delivery attempts', labelNames: ['outcome'], buckets: CALL_BUCKETS, registers });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  /** One answered request; `route` is the route table's template (never the raw path) or `unmatched`. */
  httpRequest(method: string, route: string, status: number, secondsTaken: number): void {
    this.http.observe(method, route, status, secondsTaken);
  }

  rentalCreated(provider: string): void {
    this.rentalsCreated.inc({ provider });
  }

  rentalFailed(provider: string, reason: RentalFailure): void {
    this.rentalsFailed.inc({ provider, reason });
  }

  sweepPassStarted(): SweepPassTimer {
    const startedAt = performance.now();
    return {
      step: (name) => {
        const stepStartedAt = performance.now();
        return () => this.sweepStepDuration.observe({ step: name }, seconds(stepStartedAt));
      },
      finished: (outcome: SweepPassOutcome) => {
        if (outcome.databaseUnavailable) {
          // nothing was done: no items, no starts, no oldest start known
          this.sweepPasses.inc({ outcome: 'database_unavailable' });
          return;
        }
        this.sweepPasses.inc({ outcome: !outcome.ran ? 'skipped' : outcome.lockLost ? 'lock_lost' : 'ran' });
        // a runner that skipped the money steps still took its share of the starts
        if (outcome.errors > 0) this.sweepErrors.inc(outcome.errors);
        for (const [item, count] of Object.entries(outcome.items)) this.sweepItems.inc({ item }, count);
        this.oldestDueStart.set(outcome.oldestDueStartSeconds ?? 0);
        if (outcome.ran) this.sweepDuration.observe(seconds(startedAt));
      },
    };
  }

  providerCall(provider: string, operation: string, secondsTaken: number, outcome: ProviderCallOutcome): void {
    this.providerCalls.inc({ provider, operation, outcome });
    if (outcome !== 'ok') this.providerErrors.inc({ provider, operation, kind: outcome });
    this.providerDuration.observe({ provider, operation }, secondsTaken);
  }

  providerCallCut(provider: string, operation: string): void {
    this.providerCuts.inc({ provider, operation });
  }

  ledgerPosted(kind: LedgerKind, amountCents: number, entries: number): void {
    this.ledgerEntries.inc({ kind }, entries);
    if (amountCents !== 0) this.ledgerCents.inc({ kind, direction: amountCents > 0 ? 'credit' : 'debit' }, Math.abs(amountCents));
  }

  webhookDeliveryStarted(): (outcome: WebhookOutcome, responseStatus: number | null) => void {
    const startedAt = performance.now();
    return (outcome, responseStatus) => {
      this.webhookDeliveries.inc({ outcome, status_class: statusClass(responseStatus) });
      this.webhookDuration.observe({ outcome }, seconds(startedAt));
    };
  }
}
