import { eventBody } from '../events/event.ts';
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
  /** Most attempts taken per claim. */
  batchSize: number;
  /** Attempts in flight at once in this worker: its pool. */
  concurrency: number;
  /** Attempts of one tenant in flight at once in this worker: the most of the pool one tenant's endpoints hold. */
  perTenant: number;
  /** How long a claim keeps an attempt from other workers: longer than a POST may take. */
  claimMs: number;
}

/** A tenant alone sends a claim's worth at once (as fast as one pool was before shares); a slow one holds a fifth of the pool. */
export const DEFAULT_DELIVERY_SETTINGS: DeliverySettings = { batchSize: 50, concurrency: 256, perTenant: 50, claimMs: 120_000 };

/**
 * Delivers the outbox (DESIGN.md §15): takes attempts that are due (one worker per attempt, whatever the number
 * of workers), signs each the Standard Webhooks way, posts it, and records how it went; a failure schedules the
 * next attempt with a growing gap for a day, and an endpoint failing for a whole day is disabled. A 2xx answer
 * is a success; anything else, or no answer, a failure.
 *
 * Fair between tenants (docs/decisions.md, Webhook fairness): the worker sends at most `concurrency` attempts at
 * once, of which one tenant's at most `perTenant`, and claims only what it sends at once (no attempt waits, claimed,
 * behind another), tenants in turn. A tenant whose endpoints are slow holds its share of the pool and no more, in
 * every worker, so other tenants' attempts keep going. Rounds may overlap: they share the pool.
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
  /** Attempts being sent, in all rounds, and how many of them each tenant's. */
  private sending = 0;
  private readonly sendingFor = new Map<string, number>();
  /** Attempts that have given their slot back, ever: a claim that came back short while one did may try again. */
  private released = 0;
  /** Claims are made one at a time, so each sees what the one before took. */
  private claims: Promise<unknown> = Promise.resolve();

  constructor(deps: { storage: Storage; clock: Clock; ids: Ids; secretBox: SecretBox | null; signer: WebhookSigner; transport: WebhookTransport; settings?: Partial<DeliverySettings> }) {
    this.storage = deps.storage;
    this.clock = deps.clock;
    this.ids = deps.ids;
    this.box = deps.secretBox;
    this.signer = deps.signer;
    this.transport = deps.transport;
    this.settings = { ...DEFAULT_DELIVERY_SETTINGS, ...deps.settings };
  }

  /** Told of every attempt (a metrics counter); an observer that throws does not stop deliveries. */
  addObserver(observer: DeliveryObserver): void {
    this.observers.push(observer);
  }

  /** Whether the pool has room for another attempt: a new round would have something to send with. */
  hasRoom(): boolean {
    return this.sending < this.settings.concurrency;
  }

  /**
   * One round: attempts due now, claimed as the pool makes room for them, each sent as soon as it is claimed and
   * recorded as soon as it is answered (several answers in one transaction); until a claim finds nothing for the
   * room this round has and its own attempts are recorded. Answers how many it made.
   */
  async deliverDue(): Promise<number> {
    const round = new Round(this.storage);
    let more = true;
    for (;;) {
      if (more && this.hasRoom() && !round.failed) {
        const asked = Math.min(this.settings.batchSize, this.settings.concurrency - this.sending);
        const releasedBefore = this.released;
        let claimed: ClaimedDelivery[];
        try {
          claimed = await this.claim(asked);
        } catch (error) {
          // the attempts already sent are still recorded; the round then answers the failure
          round.fail(error);
          continue;
        }
        for (const item of claimed) round.send(this.attempt(item), () => this.release(item.endpoint.tenantId));
        // fewer than asked: nothing else is due for the room there was until an attempt ends; with none of its own
        // left, the round looks once more if one of another round's ended meanwhile (its tenant may have room now)
        more = claimed.length === asked || (round.inFlight === 0 && this.released !== releasedBefore);
        if (more) continue;
      }
      if (round.inFlight === 0) break;
      await round.oneEnded();
      // a claim that came back short waits for the round's attempts to end (as a batch did): a claim per answer would
      // cost more than the answers; attempts that fall due meanwhile are the next round's, started every poll
      more = round.inFlight === 0;
    }
    return round.finished();
  }

  /** Takes up to `asked` attempts due now, each tenant's no more than its room in the pool, and counts them as sending. */
  private claim(asked: number): Promise<ClaimedDelivery[]> {
    const claimed = this.claims.then(async () => {
      const limit = Math.min(asked, this.settings.concurrency - this.sending);
      if (limit <= 0) return [];
      const now = this.clock.now();
      const share = { perTenant: this.settings.perTenant, held: this.sendingFor };
      // one statement: BEGIN and COMMIT would only add two round trips
      const items = await this.storage.autocommit((uow) => uow.webhooks.claimDue(now, new Date(now.getTime() + this.settings.claimMs), limit, share));
      for (const item of items) {
        this.sending++;
        this.sendingFor.set(item.endpoint.tenantId, (this.sendingFor.get(item.endpoint.tenantId) ?? 0) + 1);
      }
      return items;
    });
    this.claims = claimed.catch(() => undefined);
    return claimed;
  }

  private release(tenantId: string): void {
    this.released++;
    this.sending--;
    const left = (this.sendingFor.get(tenantId) ?? 1) - 1;
    if (left > 0) this.sendingFor.set(tenantId, left);
    else this.sendingFor.delete(tenantId);
  }

  /** Sends one attempt; what it did is recorded by its round, with the other answers that came meanwhile. */
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

/**
 * The attempts one round sends and records. An attempt's slot in the pool is given back when its POST ends; its
 * outcome is recorded by one recorder at a time, each transaction taking every outcome that came in meanwhile
 * (endpoint by endpoint: two workers lock endpoint rows in the same order).
 */
class Round {
  private readonly storage: Storage;
  private readonly running = new Set<Promise<void>>();
  private readonly answered: Attempted[] = [];
  private recording: Promise<void> | null = null;
  private made = 0;
  private error: { cause: unknown } | null = null;

  constructor(storage: Storage) {
    this.storage = storage;
  }

  get inFlight(): number {
    return this.running.size;
  }

  /** A claim or a recording failed: the round stops claiming, and answers the failure once its attempts are done. */
  get failed(): boolean {
    return this.error !== null;
  }

  fail(error: unknown): void {
    this.error ??= { cause: error };
  }

  send(attempt: Promise<Attempted>, ended: () => void): void {
    const sent: Promise<void> = attempt.then(
      (attempted) => {
        this.answered.push(attempted);
        this.record();
      },
      (error: unknown) => this.fail(error),
    ).finally(() => {
      ended();
      this.running.delete(sent);
    });
    this.running.add(sent);
  }

  oneEnded(): Promise<void> {
    return Promise.race(this.running);
  }

  /** Once every attempt is answered and recorded: how many were made (or why recording failed). */
  async finished(): Promise<number> {
    await Promise.all(this.running);
    while (this.recording) await this.recording;
    if (this.error) throw this.error.cause;
    return this.made;
  }

  private record(): void {
    if (this.recording) return;
    this.recording = (async () => {
      try {
        while (this.answered.length > 0) {
          const batch = this.answered.splice(0).sort((a, b) => (a.result.endpointId < b.result.endpointId ? -1 : a.result.endpointId > b.result.endpointId ? 1 : 0));
          await this.storage.transaction((uow) => uow.webhooks.finish(batch.map((a) => a.result)));
          for (const { report, watchers } of batch) for (const done of watchers) guarded(() => done(report));
          this.made += batch.length;
        }
      } catch (error) {
        // left 'sending': taken again once their claim runs out, as after a crash
        this.fail(error);
        this.answered.length = 0;
      } finally {
        this.recording = null;
      }
    })();
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
