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

/**
 * Hands out start times at least `intervalMs` apart. A slot is reserved synchronously, so concurrent
 * callers queue up instead of all firing when the previous one finishes.
 */
export class Pacer {
  readonly #intervalMs: number;
  #nextSlot = 0;

  constructor(intervalMs: number) {
    this.#intervalMs = intervalMs;
  }

  async wait(signal: AbortSignal | undefined, aborted: () => Error): Promise<void> {
    if (this.#intervalMs <= 0) return;
    const now = Date.now();
    const slot = Math.max(now, this.#nextSlot);
    this.#nextSlot = slot + this.#intervalMs;
    await pause(slot - now, signal, aborted);
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
