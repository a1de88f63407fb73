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

/**
 * For the crash test only: CRASH_CLOCK_OFFSET_MS moves this process's clock forward by that much, so a test can
 * let hours pass between one process and the next (hour blocks come due) without waiting for them.
 */
export function crashOverrides(env: Record<string, string | undefined> = process.env): { clock?: Clock } {
  const offset = Number(env.CRASH_CLOCK_OFFSET_MS ?? '0');
  if (!Number.isSafeInteger(offset) || offset === 0) return {};
  return { clock: { now: () => new Date(Date.now() + offset) } };
}
