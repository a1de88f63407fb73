import { eventBody } from '../events/event.ts';
import { inParallel } from '../in-parallel.ts';
import { messageOf } from '../errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { Ids } from '../ports/ids.ts';
import type { SecretBox } from '../ports/secret-box.ts';
import type { Storage } from '../ports/storage.ts';
import type { AttemptResult, ClaimedDelivery } from '../ports/webhook-storage.ts';
import type { PostOutcome, WebhookSigner, WebhookTransport } from '../ports/webhook-transport.ts';
import { DELIVERY_ID_PREFIX } from './endpoint.ts';
import { failedTooLong, nextAttemptAt } from './retry.ts';

/** What one attempt did, for whoever watches deliveries (metrics). */
export interface AttemptReport {
  endpointId: string;
  eventType: string;
  attempt: number;
  outcome: 'succeeded' | 'failed' | 'refused';
  responseStatus: number | null;
  /** Time spent sending, by the clock. */
  durationMs: number;
  disabled: boolean;
}

/**
 * Watches attempts (the metrics of webhook deliveries): called as an attempt starts, it answers what to call
 * with the attempt's report once it is recorded, so the time between is the attempt's latency.
 */
export type DeliveryObserver = () => (report: AttemptReport) => void;

export interface DeliverySettings {
  /** Attempts taken per claim. */
  batchSize: number;
  /** Attempts sent at once. */
  concurrency: number;
  /** How long a claim keeps an attempt from other workers: longer than a POST may take. */
  claimMs: number;
}

const DEFAULTS: DeliverySettings = { batchSize: 50, concurrency: 8, claimMs: 120_000 };

/**
 * Delivers the outbox (DESIGN.md §15): takes attempts that are due (one worker per attempt, whatever the number
 * of workers), signs each the Standard Webhooks way, posts it, and records how it went; a failure schedules the
 * next attempt with a growing gap for a day, and an endpoint failing for a whole day is disabled. A 2xx answer
 * is a success; anything else, or no answer, a failure.
 */
export class DeliveryWorker {
  private readonly storage: Storage;
  private readonly clock: Clock;
  private readonly ids: Ids;
  private readonly box: SecretBox | null;
  private readonly signer: WebhookSigner;
  private readonly transport: WebhookTransport;
  private readonly settings: DeliverySettings;
  private readonly observers: DeliveryObserver[] = [];

  constructor(deps: { storage: Storage; clock: Clock; ids: Ids; secretBox: SecretBox | null; signer: WebhookSigner; transport: WebhookTransport; settings?: Partial<DeliverySettings> }) {
    this.storage = deps.storage;
    this.clock = deps.clock;
    this.ids = deps.ids;
    this.box = deps.secretBox;
    this.signer = deps.signer;
    this.transport = deps.transport;
    this.settings = { ...DEFAULTS, ...deps.settings };
  }

  /** Told of every attempt (a metrics counter); an observer that throws does not stop deliveries. */
  addObserver(observer: DeliveryObserver): void {
    this.observers.push(observer);
  }

  /** One round: every attempt due now, claimed batch by batch until none is left. Answers how many were made. */
  async deliverDue(): Promise<number> {
    let made = 0;
    for (;;) {
      const now = this.clock.now();
      const claimed = await this.storage.transaction((uow) => uow.webhooks.claimDue(now, new Date(now.getTime() + this.settings.claimMs), this.settings.batchSize));
      if (claimed.length === 0) return made;
      const attempts: Attempted[] = [];
      await inParallel(claimed, this.settings.concurrency, async (item) => void attempts.push(await this.attempt(item)));
      // one transaction records the whole batch (per attempt it would cost more than the POSTs themselves), endpoint
      // by endpoint: two workers lock endpoint rows in the same order
      attempts.sort((a, b) => (a.result.endpointId < b.result.endpointId ? -1 : a.result.endpointId > b.result.endpointId ? 1 : 0));
      await this.storage.transaction((uow) => uow.webhooks.finish(attempts.map((a) => a.result)));
      for (const { report, watchers } of attempts) for (const done of watchers) guarded(() => done(report));
      made += claimed.length;
      if (claimed.length < this.settings.batchSize) return made;
    }
  }

  /** Sends one attempt; what it did is recorded by the caller, with the rest of its batch. */
  private async attempt(claimed: ClaimedDelivery): Promise<Attempted> {
    const { delivery, event, endpoint } = claimed;
    const watchers = this.observers.map((observer) => guarded(observer)).filter((done) => done !== null);
    const started = this.clock.now();
    let outcome: PostOutcome;
    try {
      if (!this.box) throw new Error('no SECRETS_KEY to open the signing secret with');
      const secret = this.box.open(endpoint.secretSealed, endpoint.id);
      const body = eventBody(event);
      const headers = {
        'content-type': 'application/json',
        'user-agent': 'gpu-control-plane-webhooks/1',
        'webhook-id': event.id,
        'webhook-timestamp': String(Math.floor(started.getTime() / 1000)),
        'webhook-signature': this.signer.sign(secret, event.id, started, body),
      };
      outcome = await this.transport.post(endpoint.url, headers, body);
    } catch (error) {
      outcome = { kind: 'unreachable', reason: messageOf(error) };
    }
    const now = this.clock.now();
    const ok = outcome.kind === 'answered' && outcome.status >= 200 && outcome.status < 300;
    const error = ok ? null : outcome.kind === 'answered' ? `answered HTTP ${outcome.status}` : outcome.reason;
    const retryAt = ok ? null : nextAttemptAt(delivery.attempt, claimed.firstDueAt, now);
    const failingSince = endpoint.failingSince ?? now;
    const result: AttemptResult = {
      deliveryId: delivery.id,
      endpointId: endpoint.id,
      at: now,
      ok,
      responseStatus: outcome.kind === 'answered' ? outcome.status : null,
      error,
      retry: retryAt ? { id: this.ids.newId(DELIVERY_ID_PREFIX), at: retryAt } : null,
      disable: !ok && failedTooLong(failingSince, now) ? `every delivery failed since ${failingSince.toISOString()} (24 hours); the last: ${error}` : null,
    };
    const report: AttemptReport = {
      endpointId: endpoint.id,
      eventType: event.type,
      attempt: delivery.attempt,
      outcome: ok ? 'succeeded' : outcome.kind === 'refused' ? 'refused' : 'failed',
      responseStatus: result.responseStatus,
      durationMs: now.getTime() - started.getTime(),
      disabled: result.disable !== null,
    };
    return { result, report, watchers };
  }
}

interface Attempted {
  result: AttemptResult;
  report: AttemptReport;
  watchers: ((report: AttemptReport) => void)[];
}

/** A watcher's failure is not the delivery's. */
function guarded<T>(call: () => T): T | null {
  try {
    return call();
  } catch {
    return null;
  }
}
