import type { Storage } from '../ports/storage.ts';
import type { NewUsage, UsageRecord } from './usage.ts';

interface Waiting {
  usage: NewUsage;
  resolve: (record: UsageRecord | null) => void;
  reject: (error: unknown) => void;
}

/**
 * Records arriving at the same moment go to the database together: while one call is on its way, the records
 * that arrive wait for it and then leave in one call of their own (one round trip, one commit, one write for
 * all of them). A record alone leaves at once, so nothing waits when nothing else is going on. Each record is
 * metered as it would be alone (the storage keeps the per-kind order and the one rounding); when a call
 * fails, its records go again one by one, so a record fails only by itself.
 */
export class IngestBatcher {
  private readonly storage: Storage;
  private readonly maxBatch: number;
  private readonly maxInFlight: number;
  private readonly waiting: Waiting[] = [];
  private inFlight = 0;

  constructor(storage: Storage, options: { maxBatch: number; maxInFlight: number }) {
    this.storage = storage;
    this.maxBatch = options.maxBatch;
    this.maxInFlight = options.maxInFlight;
  }

  add(usage: NewUsage): Promise<UsageRecord | null> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ usage, resolve, reject });
      if (this.inFlight < this.maxInFlight) void this.send();
    });
  }

  private async send(): Promise<void> {
    this.inFlight++;
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0, this.maxBatch);
        try {
          const records = await this.storage.autocommit((uow) => uow.usage.addMany(batch.map((w) => w.usage)));
          batch.forEach((w, k) => w.resolve(records[k] ?? null));
        } catch (error) {
          // the call was one transaction: nothing of it stayed. Each record goes again alone, so one that
          // cannot be stored fails by itself and the others are not failed with it
          if (batch.length === 1) batch[0]!.reject(error);
          else await Promise.all(batch.map((w) => this.storage.autocommit((uow) => uow.usage.add(w.usage)).then(w.resolve, w.reject)));
        }
      }
    } finally {
      this.inFlight--;
    }
  }
}
