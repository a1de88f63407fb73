/** Retries of a failed delivery go on for a day after its first attempt was due. */
export const RETRY_WINDOW_MS = 24 * 3_600_000;
const FIRST_GAP_MS = 60_000;
const GROWTH = 4;
const LONGEST_GAP_MS = 6 * 3_600_000;

/**
 * When to try again after attempt number `attempt` failed at `now`: 1 min, 4 min, 16 min, 64 min, 4 h 16 min,
 * then every 6 h, the last try falling on the window's end (so an endpoint that never answers has failed
 * for the whole day when it is tried for the last time). null: the window is over.
 */
export function nextAttemptAt(attempt: number, firstDueAt: Date, now: Date): Date | null {
  const end = firstDueAt.getTime() + RETRY_WINDOW_MS;
  if (now.getTime() >= end) return null;
  const gap = Math.min(FIRST_GAP_MS * GROWTH ** (attempt - 1), LONGEST_GAP_MS);
  return new Date(Math.min(now.getTime() + gap, end));
}

/** An endpoint failing since `failingSince` is disabled once it has failed for the whole window. */
export const failedTooLong = (failingSince: Date, now: Date): boolean => now.getTime() - failingSince.getTime() >= RETRY_WINDOW_MS;
