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
 * Takes work from a shared queue as hands free up, at most `hands` items at once: `take(n)` claims up to n items
 * (FOR UPDATE SKIP LOCKED, so other runners share the queue item by item instead of one taking a whole batch),
 * `run` does one and records its own outcome. Taking stops once the queue answers nothing or the budget is over;
 * it answers when everything taken has ended, or when the budget ends: what still runs then (a create the cloud
 * is slow to answer) finishes by itself and stalls nothing but itself.
 */
export async function drainQueue<T>(options: { hands: number; budget: Budget; take: (n: number) => Promise<T[]>; run: (item: T) => Promise<void> }): Promise<{ taken: number; leftRunning: number }> {
  const { hands, budget, take, run } = options;
  const running = new Set<Promise<void>>();
  const { ended, cancel } = budget.ending();
  let taken = 0;
  try {
    for (;;) {
      while (running.size >= hands && !budget.over()) await Promise.race([...running, ended]);
      if (budget.over()) break;
      const items = await take(hands - running.size);
      if (items.length === 0) break;
      taken += items.length;
      for (const item of items) {
        const done: Promise<void> = run(item)
          .catch(() => undefined)
          .finally(() => running.delete(done));
        running.add(done);
      }
    }
    await Promise.race([Promise.all(running), ended]);
    return { taken, leftRunning: running.size };
  } finally {
    cancel();
  }
}
