import { describe, expect, it, vi } from 'vitest';
import { asBackground, callPriority, Pacer, pause, retryAfterMs } from '../../../adapters/providers/shared/pacing.ts';

const aborted = () => new Error('aborted by the caller');

describe('provider pacing helpers', () => {
  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-11-21T12:00:00Z');
    expect(retryAfterMs('7', now)).toBe(7000);
    expect(retryAfterMs(['2', '9'], now)).toBe(2000);
    expect(retryAfterMs('Sat, 21 Nov 2026 12:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterMs('Sat, 21 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs(undefined, now)).toBeNull();
    expect(retryAfterMs('soon', now)).toBeNull();
  });

  it('spaces concurrent callers at least the interval apart', async () => {
    // the pacer's time driven here: each caller's release is read on the pacer's own clock, not when a loaded
    // machine gets round to running the caller
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    try {
      const pacer = new Pacer(40);
      const started: number[] = [];
      const all = Promise.all(Array.from({ length: 3 }, () => pacer.wait(undefined, aborted).then(() => started.push(Date.now()))));
      await vi.advanceTimersByTimeAsync(200);
      await all;
      expect(started[1]! - started[0]!).toBeGreaterThanOrEqual(40);
      expect(started[2]! - started[1]!).toBeGreaterThanOrEqual(40);
    } finally {
      vi.useRealTimers();
    }
  });

  it('lets a person go ahead of the background callers already waiting, and keeps each kind in order', async () => {
    const pacer = new Pacer(30);
    const order: string[] = [];
    await pacer.wait(undefined, aborted); // the slot now is taken: everyone below waits
    const background = [0, 1, 2].map((i) => asBackground(() => pacer.wait(undefined, aborted).then(() => void order.push(`sweep ${i}`))));
    const people = [0, 1].map((i) => pacer.wait(undefined, aborted).then(() => void order.push(`person ${i}`)));
    await Promise.all([...background, ...people]);
    expect(order).toEqual(['person 0', 'person 1', 'sweep 0', 'sweep 1', 'sweep 2']);
    expect(callPriority()).toBe('interactive');
    expect(await asBackground(async () => callPriority())).toBe('background');
  });

  it('a waiter whose caller aborts leaves the queue; the next one gets its slot', async () => {
    // the pacer's time (Date.now, setTimeout) driven here: the next slot is 30 ms on, the one after it 60
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    try {
      const pacer = new Pacer(30);
      await pacer.wait(undefined, aborted);
      const controller = new AbortController();
      const leaving = pacer.wait(controller.signal, aborted);
      let stayed = false;
      const staying = pacer.wait(undefined, aborted).then(() => void (stayed = true));
      controller.abort();
      await expect(leaving).rejects.toThrow('aborted by the caller');
      await vi.advanceTimersByTimeAsync(29);
      expect(stayed).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(stayed).toBe(true);
      await staying;
    } finally {
      vi.useRealTimers();
    }
  });

  it("rejects a pause with the client's own error when the caller aborts", async () => {
    const controller = new AbortController();
    const waiting = pause(10_000, controller.signal, aborted);
    controller.abort();
    await expect(waiting).rejects.toThrow('aborted by the caller');
    await expect(pause(0, controller.signal, aborted)).rejects.toThrow('aborted by the caller');
  });
});
