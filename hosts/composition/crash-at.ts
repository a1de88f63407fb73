import { CRASH_POINTS, installCrashHook, type CrashPointName } from '../../core/crash-points.ts';
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
