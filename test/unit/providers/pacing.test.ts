import { describe, expect, it } from 'vitest';
import { Pacer, pause, retryAfterMs } from '../../../adapters/providers/shared/pacing.ts';

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
    const pacer = new Pacer(40);
    const started: number[] = [];
    await Promise.all(Array.from({ length: 3 }, () => pacer.wait(undefined, aborted).then(() => started.push(performance.now()))));
    expect(started[1]! - started[0]!).toBeGreaterThanOrEqual(35);
    expect(started[2]! - started[1]!).toBeGreaterThanOrEqual(35);
  });

  it("rejects a pause with the client's own error when the caller aborts", async () => {
    const controller = new AbortController();
    const waiting = pause(10_000, controller.signal, aborted);
    controller.abort();
    await expect(waiting).rejects.toThrow('aborted by the caller');
    await expect(pause(0, controller.signal, aborted)).rejects.toThrow('aborted by the caller');
  });
});
