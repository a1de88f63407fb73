import type { Storage } from '../ports/storage.ts';
import { guarded, type Attempted } from './send-attempt.ts';

/**
 * The attempts one round sends and records. An attempt's slot in the pool is given back when its POST ends; its
 * outcome is recorded by one recorder at a time, each transaction taking every outcome that came in meanwhile
 * (endpoint by endpoint: two workers lock endpoint rows in the same order).
 */
export class Round {
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
