import { eventBody } from '../events/event.ts';
import { messageOf } from '../errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { Ids } from '../ports/ids.ts';
import type { SecretBox } from '../ports/secret-box.ts';
import type { AttemptResult, ClaimedDelivery } from '../ports/webhook-storage.ts';
import type { PostOutcome, WebhookSigner, WebhookTransport } from '../ports/webhook-transport.ts';
import { DELIVERY_ID_PREFIX } from './endpoint.ts';
import { failedTooLong, nextAttemptAt } from './retry.ts';

/** What one attempt did, for whoever watches deliveries (metrics). */
export interface AttemptReport {
  endpointId: string;
  eventType: string;
  attempt: number;
  /** `withheld`: not sent, its registrant having lapsed (registrant.ts); the endpoint is disabled. */
  outcome: 'succeeded' | 'failed' | 'refused' | 'withheld';
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

/** What sending an attempt works with: the clock, ids for the next attempt, the box that opens signing secrets, the signer and the transport. */
export interface AttemptDeps {
  clock: Clock;
  ids: Ids;
  box: SecretBox | null;
  signer: WebhookSigner;
  transport: WebhookTransport;
}

/** Sends one attempt, signed the Standard Webhooks way; what it did is recorded by its round (delivery-round.ts), with the other answers that came meanwhile. */
export async function sendAttempt(deps: AttemptDeps, claimed: ClaimedDelivery, observers: readonly DeliveryObserver[]): Promise<Attempted> {
  const { delivery, event, endpoint } = claimed;
  const watchers = observers.map((observer) => guarded(observer)).filter((done) => done !== null);
  const started = deps.clock.now();
  let outcome: PostOutcome;
  try {
    if (!deps.box) throw new Error('no SECRETS_KEY to open the signing secret with');
    const secret = deps.box.open(endpoint.secretSealed, endpoint.id);
    const body = eventBody(event);
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'gpu-control-plane-webhooks/1',
      'webhook-id': event.id,
      'webhook-timestamp': String(Math.floor(started.getTime() / 1000)),
      'webhook-signature': deps.signer.sign(secret, event.id, started, body),
    };
    outcome = await deps.transport.post(endpoint.url, headers, body);
  } catch (error) {
    outcome = { kind: 'unreachable', reason: messageOf(error) };
  }
  const now = deps.clock.now();
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
    retry: retryAt ? { id: deps.ids.newId(DELIVERY_ID_PREFIX), at: retryAt } : null,
    disable: !ok && failedTooLong(failingSince, now) ? `every delivery failed since ${failingSince.toISOString()} (24 hours); the last: ${error}` : null,
    withheld: false,
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

/**
 * An attempt not sent because the endpoint's registrant could no longer register it (`lapse` says why): recorded
 * abandoned, the endpoint disabled with the same words, as a revocation or a role change would have done.
 */
export function withheldAttempt(clock: Clock, claimed: ClaimedDelivery, lapse: string, observers: readonly DeliveryObserver[]): Attempted {
  const watchers = observers.map((observer) => guarded(observer)).filter((done) => done !== null);
  const { delivery, endpoint, event } = claimed;
  const at = clock.now();
  return {
    result: { deliveryId: delivery.id, endpointId: endpoint.id, at, ok: false, responseStatus: null, error: `not sent: ${lapse}`, retry: null, disable: lapse, withheld: true },
    report: { endpointId: endpoint.id, eventType: event.type, attempt: delivery.attempt, outcome: 'withheld', responseStatus: null, durationMs: 0, disabled: true },
    watchers,
  };
}

/** An attempt answered: what to record, what to tell its watchers, and who watches. */
export interface Attempted {
  result: AttemptResult;
  report: AttemptReport;
  watchers: ((report: AttemptReport) => void)[];
}

/** A watcher's failure is not the delivery's. */
export function guarded<T>(call: () => T): T | null {
  try {
    return call();
  } catch {
    return null;
  }
}
