import { DomainError, rateLimited } from '../errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { Storage } from '../ports/storage.ts';

export interface ThrottleSettings {
  windowMs: number;
  /** Failed sign-ins one email may have from one client address within the window. */
  passwordPerClient: number;
  /**
   * Failed sign-ins one email may have from all addresses together: high enough that a guesser elsewhere
   * rarely locks the owner out, low enough to bound a guesser who rotates addresses.
   */
  passwordPerEmail: number;
  /** Wrong codes one email may send within the window (from anywhere: a code is one secret, wherever it is tried). */
  codesPerEmail: number;
}

export type FailureKind = 'password' | 'code';

/** A slot taken for one check: `passed()` gives it back, as a check that succeeded (or never ran) is no failure. */
export interface FailureSlot {
  passed(): Promise<void>;
}

export const emailKey = (email: string): string => email.trim().toLowerCase();

/**
 * Failure throttles read and written as one step (docs/decisions.md, "Sign-in throttles"). Before a password
 * or a code is checked, a failure is recorded under a lock on the email, if the counts allow one; the check
 * then runs, and a success takes the failure back. So of any number of parallel wrong answers at most the
 * limit are ever checked: the rest find the slots taken and get 429 with Retry-After, never 401 or 422.
 * Right answers in flight hold a slot too, until they are known to be right.
 */
export class FailureThrottle {
  private readonly storage: Storage;
  private readonly clock: Clock;
  private readonly settings: ThrottleSettings;

  constructor(deps: { storage: Storage; clock: Clock; settings: ThrottleSettings }) {
    this.storage = deps.storage;
    this.clock = deps.clock;
    this.settings = deps.settings;
  }

  /**
   * Runs `check` in a failure slot of the email (and client address, for passwords), or throws RATE_LIMITED
   * without running it. The slot stays taken when `check` fails as `isFailure` says; otherwise it is given back.
   */
  async guard<T>(kind: FailureKind, email: string, clientKey: string, isFailure: (error: unknown) => boolean, check: () => Promise<T>): Promise<T> {
    const slot = await this.take(kind, emailKey(email), kind === 'code' ? '' : clientKey);
    let result: T;
    try {
      result = await check();
    } catch (error) {
      if (!isFailure(error)) await slot.passed();
      throw error;
    }
    await slot.passed();
    return result;
  }

  private async take(kind: FailureKind, key: string, clientKey: string): Promise<FailureSlot> {
    const now = this.clock.now();
    const windowStart = new Date(now.getTime() - this.settings.windowMs);
    await this.pruneNowAndThen(now, windowStart);
    const outcome = await this.storage.transaction(async (uow): Promise<{ id: string } | { retryAt: Date }> => {
      await uow.authFailures.lockEmail(key);
      const { email, client } = await uow.authFailures.count(key, clientKey, kind, windowStart);
      const limits = kind === 'password' ? [[client, this.settings.passwordPerClient], [email, this.settings.passwordPerEmail]] as const : [[email, this.settings.codesPerEmail]] as const;
      // the later of the moments each full window frees a slot
      let retryAt: Date | null = null;
      for (const [counted, limit] of limits) {
        if (counted.count < limit) continue;
        const frees = new Date((counted.oldest ?? now).getTime() + this.settings.windowMs);
        if (!retryAt || frees > retryAt) retryAt = frees;
      }
      if (retryAt) return { retryAt };
      return { id: await uow.authFailures.record(key, clientKey, kind, now) };
    });
    if ('retryAt' in outcome) {
      const seconds = Math.max(1, Math.ceil((outcome.retryAt.getTime() - now.getTime()) / 1000));
      throw rateLimited(kind === 'password' ? 'too many failed sign-ins for this email' : 'too many wrong codes for this email', seconds);
    }
    return {
      passed: () => this.storage.autocommit((uow) => uow.authFailures.forget(outcome.id)),
    };
  }

  private lastPrune = 0;

  /** Forgets failures that left every window (of any email), at most once a minute per process. */
  private async pruneNowAndThen(now: Date, before: Date): Promise<void> {
    if (now.getTime() - this.lastPrune < PRUNE_EVERY_MS && now.getTime() >= this.lastPrune) return;
    this.lastPrune = now.getTime();
    await this.storage.autocommit((uow) => uow.authFailures.prune(before));
  }
}

const PRUNE_EVERY_MS = 60_000;

/** A wrong email or password: the one failure of a sign-in. */
export const isWrongPassword = (error: unknown): boolean => error instanceof DomainError && error.code === 'INVALID_CREDENTIALS';

/** A wrong, used or expired code: the one failure of a code try. */
export const isWrongCode = (error: unknown): boolean =>
  error instanceof DomainError && error.code === 'INVALID_INPUT' && error.problems.some((p) => p.loc.at(-1) === 'code');
