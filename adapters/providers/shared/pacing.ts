import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as delay } from 'node:timers/promises';

/**
 * Timing helpers every HTTP provider client needs: waiting that the caller can abort, spacing calls
 * under an upstream rate limit, and reading Retry-After. `aborted` builds the client's own error, so
 * each adapter keeps classifying an abort its way.
 */
export async function pause(ms: number, signal: AbortSignal | undefined, aborted: () => Error): Promise<void> {
  if (signal?.aborted) throw aborted();
  if (ms <= 0) return;
  try {
    await delay(ms, undefined, signal ? { signal } : undefined);
  } catch (error) {
    if (signal?.aborted) throw aborted();
    throw error;
  }
}

/** Whose call this is: a person's request (first in a pacer), or the sweep's background work. */
export type CallPriority = 'interactive' | 'background';

const priority = new AsyncLocalStorage<CallPriority>();

/**
 * Runs `work` as background work (the Background port, core/ports/call-priority.ts): every provider call it makes,
 * however deep, waits in a pacer behind the interactive calls. Calls made outside it are interactive.
 */
export const asBackground = <T>(work: () => Promise<T>): Promise<T> => priority.run('background', work);

/** The priority of the calls made here and now. */
export const callPriority = (): CallPriority => priority.getStore() ?? 'interactive';

interface Waiter {
  priority: CallPriority;
  go: () => void;
}

/**
 * Hands out start times at least `intervalMs` apart. Callers queue in order, except that an interactive caller
 * (a person's request) goes ahead of every background one (the sweep's starts): a hundred reservations queued for
 * a cloud that launches one machine per 12 s do not make a person wait twenty minutes.
 */
export class Pacer {
  readonly #intervalMs: number;
  #nextSlot = 0;
  readonly #queue: Waiter[] = [];
  #timer: ReturnType<typeof setTimeout> | null = null;

  constructor(intervalMs: number) {
    this.#intervalMs = intervalMs;
  }

  async wait(signal: AbortSignal | undefined, aborted: () => Error, who: CallPriority = callPriority()): Promise<void> {
    if (this.#intervalMs <= 0) return;
    if (signal?.aborted) throw aborted();
    const now = Date.now();
    if (this.#queue.length === 0 && now >= this.#nextSlot) {
      this.#nextSlot = now + this.#intervalMs;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const at = this.#queue.indexOf(waiter);
        if (at >= 0) this.#queue.splice(at, 1);
        reject(aborted());
      };
      const waiter: Waiter = {
        priority: who,
        go: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      // an interactive caller after the interactive ones already waiting, before every background one
      const firstBackground = this.#queue.findIndex((other) => other.priority === 'background');
      this.#queue.splice(who === 'interactive' && firstBackground >= 0 ? firstBackground : this.#queue.length, 0, waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#timer !== null || this.#queue.length === 0) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      const next = this.#queue.shift();
      if (next) {
        this.#nextSlot = Date.now() + this.#intervalMs;
        next.go();
      }
      this.#schedule();
    }, Math.max(0, this.#nextSlot - Date.now()));
  }
}

/** `Retry-After` in milliseconds, from delta-seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterMs(value: string | string[] | undefined, now = Date.now()): number | null {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return null;
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}
