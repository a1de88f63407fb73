import { readFileSync } from 'node:fs';
import { CRASH_POINTS, installCrashHook, type CrashPointName } from '../../core/crash-points.ts';
import type { Clock } from '../../core/ports/clock.ts';
import { ConfigError } from './config.ts';

/**
 * For the crash test only (docs/decisions.md, "Crash anywhere, lose nothing"): CRASH_AT=<crash point> makes this
 * process kill itself (SIGKILL: no handler runs, nothing is flushed) the first time it reaches that point, or, with
 * CRASH_AT_SKIP=n, the (n+1)th time. Unset, every crash point does nothing.
 */
export function installCrashAt(env: Record<string, string | undefined> = process.env): void {
  const at = env.CRASH_AT;
  if (!at) return;
  if (!(CRASH_POINTS as readonly string[]).includes(at)) throw new ConfigError(`CRASH_AT: no crash point is named ${at}; known: ${CRASH_POINTS.join(', ')}`);
  let skip = Number(env.CRASH_AT_SKIP ?? '0');
  installCrashHook((name: CrashPointName) => {
    if (name !== at) return;
    if (skip-- > 0) return;
    process.kill(process.pid, 'SIGKILL');
  });
}

/** How stale a read of the clock file may be: the test moves the clock only while nothing of its own is in flight. */
const CLOCK_FILE_FRESH_MS = 20;

/**
 * For the crash test only: CRASH_CLOCK_FILE names a file holding milliseconds, by which this process's clock runs
 * ahead of the real one. The test moves them forward while its processes run (hour blocks come due without waiting
 * for them), and every process on the same file (a server, a replica, the sweep daemon) keeps the one clock.
 */
export function crashOverrides(env: Record<string, string | undefined> = process.env): { clock?: Clock } {
  const file = env.CRASH_CLOCK_FILE;
  if (!file) return {};
  const read = (): number => {
    const offset = Number(readFileSync(file, 'utf8').trim());
    if (!Number.isSafeInteger(offset)) throw new ConfigError(`CRASH_CLOCK_FILE: ${file} must hold a whole number of milliseconds`);
    return offset;
  };
  let offset = read();
  let readAt = performance.now();
  const current = (): number => {
    if (performance.now() - readAt < CLOCK_FILE_FRESH_MS) return offset;
    offset = read();
    readAt = performance.now();
    return offset;
  };
  return { clock: { now: () => new Date(Date.now() + current()) } };
}

/** For the crash test only: CRASH_SWEEP_SECONDS=n makes the sweep daemon run a pass every n seconds (1 to 59), not every minute. */
export function crashSweepPattern(env: Record<string, string | undefined> = process.env): string | null {
  const text = env.CRASH_SWEEP_SECONDS;
  if (!text) return null;
  const seconds = Number(text);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > 59) throw new ConfigError(`CRASH_SWEEP_SECONDS: a whole number from 1 to 59, got "${text}"`);
  return `*/${seconds} * * * * *`;
}
