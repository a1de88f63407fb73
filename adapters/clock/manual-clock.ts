import type { Clock } from '../../core/ports/clock.ts';

/** A clock that moves only when told to: for tests and simulations embedding the control plane. */
export class ManualClock implements Clock {
  private current: number;

  constructor(start: Date | string = '2026-01-01T00:00:00.000Z') {
    this.current = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.current);
  }

  advance(ms: number): void {
    this.current += ms;
  }

  advanceMinutes(minutes: number): void {
    this.advance(minutes * 60_000);
  }

  set(to: Date | string): void {
    this.current = new Date(to).getTime();
  }
}
