/**
 * A span of real time (not the Clock's: a test's ManualClock stands still while a cloud is slow) that some work
 * may take: a sweep pass's budget. Measured on the monotonic clock, so a wall-clock jump neither ends nor
 * stretches it.
 */
export class Budget {
  private readonly startedAt: number;
  private readonly endsAt: number;

  private constructor(ms: number) {
    this.startedAt = performance.now();
    this.endsAt = this.startedAt + ms;
  }

  static of(ms: number): Budget {
    return new Budget(ms);
  }

  /** Milliseconds since it began. */
  elapsedMs(): number {
    return performance.now() - this.startedAt;
  }

  /** Milliseconds left; 0 once over. */
  leftMs(): number {
    return Math.max(0, this.endsAt - performance.now());
  }

  over(): boolean {
    return this.leftMs() === 0;
  }

  /** Resolves when the budget ends; `cancel` lets a finished wait go without keeping a timer alive. */
  ending(): { ended: Promise<void>; cancel: () => void } {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ended = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.leftMs());
    });
    return { ended, cancel: () => clearTimeout(timer) };
  }
}
