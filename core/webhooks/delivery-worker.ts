import type { Clock } from '../ports/clock.ts';
import type { Ids } from '../ports/ids.ts';
import type { SecretBox } from '../ports/secret-box.ts';
import type { Storage } from '../ports/storage.ts';
import type { ClaimedDelivery } from '../ports/webhook-storage.ts';
import type { WebhookSigner, WebhookTransport } from '../ports/webhook-transport.ts';
import { Round } from './delivery-round.ts';
import { lapsesOf } from './lapsed-endpoints.ts';
import { sendAttempt, withheldAttempt, type AttemptDeps, type DeliveryObserver } from './send-attempt.ts';

/** A claimed attempt, with why its endpoint may deliver no more (null: it may). */
interface Claimed {
  item: ClaimedDelivery;
  lapse: string | null;
}

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
 * Delivers the outbox (docs/decisions.md, "Webhooks"): takes attempts that are due (one worker per attempt, whatever the number
 * of workers), signs each the Standard Webhooks way, posts it, and records how it went; a failure schedules the
 * next attempt with a growing gap for a day, and an endpoint failing for a whole day is disabled. A 2xx answer
 * is a success; anything else, or no answer, a failure.
 *
 * Fair between tenants (docs/decisions.md, "Fairness and amplification: webhooks and MCP"): the worker sends at most `concurrency` attempts at
 * once, of which one tenant's at most `perTenant`, and claims only what it sends at once (no attempt waits, claimed,
 * behind another), tenants in turn. A tenant whose endpoints are slow holds its share of the pool and no more, in
 * every worker, so other tenants' attempts keep going. Rounds may overlap: they share the pool.
 */
export class DeliveryWorker {
  private readonly storage: Storage;
  private readonly clock: Clock;
  private readonly attempts: AttemptDeps;
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
    this.attempts = { clock: deps.clock, ids: deps.ids, box: deps.secretBox, signer: deps.signer, transport: deps.transport };
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
        let claimed: Claimed[];
        try {
          claimed = await this.claim(asked);
        } catch (error) {
          // the attempts already sent are still recorded; the round then answers the failure
          round.fail(error);
          continue;
        }
        for (const { item, lapse } of claimed) {
          const attempt = lapse === null ? sendAttempt(this.attempts, item, this.observers) : Promise.resolve(withheldAttempt(this.clock, item, lapse, this.observers));
          round.send(attempt, () => this.release(item.endpoint.tenantId));
        }
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

  /**
   * Takes up to `asked` attempts due now, each tenant's no more than its room in the pool, and counts them as sending;
   * each with why its endpoint may deliver no more when a node its registrant's standing rests on has ended
   * (docs/decisions.md, "One tree of authority"). Revocations, removals and role changes disable their endpoints as
   * they commit; this covers what ends by time alone (expiry, an idle deadline passed), whatever the sweep has got to,
   * and any ending that did not.
   */
  private claim(asked: number): Promise<Claimed[]> {
    const claimed = this.claims.then(async () => {
      const limit = Math.min(asked, this.settings.concurrency - this.sending);
      if (limit <= 0) return [];
      const now = this.clock.now();
      const share = { perTenant: this.settings.perTenant, held: this.sendingFor };
      // one statement: BEGIN and COMMIT would only add two round trips
      const { items, lapses } = await this.storage.autocommit(async (uow) => {
        const items = await uow.webhooks.claimDue(now, new Date(now.getTime() + this.settings.claimMs), limit, share);
        // the chains are read only where the claim saw a node ended (rare), so a delivery costs no more round trips;
        // should the read fail, nothing is sent: the attempts stay claimed and are taken again once the claim runs out
        const suspect = items.filter((item) => item.registrantEnded).map((item) => item.endpoint);
        return { items, lapses: await lapsesOf(uow, suspect, now) };
      });
      for (const item of items) {
        this.sending++;
        this.sendingFor.set(item.endpoint.tenantId, (this.sendingFor.get(item.endpoint.tenantId) ?? 0) + 1);
      }
      return items.map((item) => ({ item, lapse: lapses.get(item.endpoint.id) ?? null }));
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
}
