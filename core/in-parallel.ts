import type { Budget } from './budget.ts';

/** Runs `work` over `items`, at most `limit` at a time (the sweep's steps and the webhook worker send in parallel). */
export async function inParallel<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * Runs `work` over `items` grouped by `keyOf` (their provider): at most `limit` of one group at a time, the groups
 * side by side, so a slow cloud holds up only its own calls and no cloud gets more than `limit` at once from here.
 */
export async function inParallelBy<T>(items: readonly T[], keyOf: (item: T) => string, limit: number, work: (item: T) => Promise<void>): Promise<void> {
  const groups = Map.groupBy(items, keyOf);
  await Promise.all([...groups.values()].map((group) => inParallel(group, limit, work)));
}

/**
 * Takes work from a shared queue as hands free up, at most `hands` items at once: `take(n, busy)` claims up to n
 * items (FOR UPDATE SKIP LOCKED, so other runners share the queue item by item instead of one taking a whole batch),
 * leaving alone those of the lanes in `busy`; `run` does one and records its own outcome. An item's lane (its
 * provider, when known before it runs) holds at most `perLane` hands, so a slow cloud holds up only its own items.
 * Taking stops once the queue answers nothing or the budget is over; it answers when everything taken has ended,
 * or when the budget ends: what still runs then (a create the cloud is slow to answer) finishes by itself and
 * stalls nothing but itself.
 */
export async function drainQueue<T>(options: {
  hands: number;
  budget: Budget;
  take: (count: number, busy: readonly string[]) => Promise<T[]>;
  run: (item: T) => Promise<void>;
  laneOf?: (item: T) => string | null;
  perLane?: number;
}): Promise<{ taken: number; leftRunning: number }> {
  const { hands, budget, take, run } = options;
  const laneOf = options.laneOf ?? (() => null);
  const perLane = options.perLane ?? hands;
  const running = new Set<Promise<void>>();
  const inLane = new Map<string, number>();
  const { ended, cancel } = budget.ending();
  const oneEnds = () => Promise.race([...running, ended]);
  let taken = 0;
  try {
    for (;;) {
      while (running.size >= hands && !budget.over()) await oneEnds();
      if (budget.over()) break;
      const busy = [...inLane].filter(([, count]) => count >= perLane).map(([lane]) => lane);
      // no more than the fullest open lane has room for: every item taken may be of that lane
      const fullest = Math.max(0, ...[...inLane.values()].filter((count) => count < perLane));
      const items = await take(Math.min(hands - running.size, perLane - fullest), busy);
      if (items.length === 0) {
        // items of a busy lane may still wait: taken once one of its hands frees up
        if (busy.length === 0 || running.size === 0) break;
        await oneEnds();
        continue;
      }
      taken += items.length;
      for (const item of items) {
        const lane = laneOf(item);
        if (lane !== null) inLane.set(lane, (inLane.get(lane) ?? 0) + 1);
        const done: Promise<void> = run(item)
          .catch(() => undefined)
          .finally(() => {
            running.delete(done);
            if (lane !== null) inLane.set(lane, inLane.get(lane)! - 1);
          });
        running.add(done);
      }
    }
    await Promise.race([Promise.all(running), ended]);
    return { taken, leftRunning: running.size };
  } finally {
    cancel();
  }
}
