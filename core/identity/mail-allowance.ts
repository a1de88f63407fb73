import type { Clock } from '../ports/clock.ts';
import type { MailAllowance } from '../ports/mailer.ts';
import type { Storage } from '../ports/storage.ts';
import { emailKey } from './failure-throttle.ts';

export interface MailAllowanceSettings {
  /** Asks that may mail one address within the window. */
  perAddress: number;
  windowMs: number;
}

/**
 * Mail to one address, rationed across replicas (docs/decisions.md, "Mail to one address"): every ask that
 * may mail an address (sign-up, resend, forgot, an invitation, a notice to the people of a tenant) takes one
 * from the address's allowance first, counted in the database under a lock on the address, whether or not
 * the address has an account (so the count, and the time it takes, tell nobody whether it has one). An ask
 * past the allowance is answered as usual and mails nothing, and changes no code a mail would have carried.
 */
export class DatabaseMailAllowance implements MailAllowance {
  private readonly storage: Storage;
  private readonly clock: Clock;
  private readonly settings: MailAllowanceSettings;
  private lastPrune = 0;

  constructor(deps: { storage: Storage; clock: Clock; settings: MailAllowanceSettings }) {
    this.storage = deps.storage;
    this.clock = deps.clock;
    this.settings = deps.settings;
  }

  async take(to: string): Promise<boolean> {
    const address = emailKey(to);
    const now = this.clock.now();
    const since = new Date(now.getTime() - this.settings.windowMs);
    if (now.getTime() - this.lastPrune >= PRUNE_EVERY_MS || now.getTime() < this.lastPrune) {
      this.lastPrune = now.getTime();
      await this.storage.autocommit((uow) => uow.mailSends.prune(since));
    }
    return this.storage.transaction(async (uow) => {
      await uow.mailSends.lockAddress(address);
      const { count } = await uow.mailSends.countSince(address, since);
      if (count >= this.settings.perAddress) return false;
      await uow.mailSends.record(address, now);
      return true;
    });
  }
}

const PRUNE_EVERY_MS = 60_000;
