import { cheapestFirst, type MarketNode } from './node.ts';

/** The cheapest `limit` nodes of several lists that are each sorted cheapest first. */
export function mergeCheapest(lists: MarketNode[][], limit: number): MarketNode[] {
  if (lists.length === 1) return lists[0]!.length <= limit ? lists[0]! : lists[0]!.slice(0, limit);
  const heads = lists.map(() => 0);
  const merged: MarketNode[] = [];
  while (merged.length < limit) {
    let best = -1;
    for (let i = 0; i < lists.length; i++) {
      const candidate = lists[i]![heads[i]!];
      if (candidate && (best < 0 || cheapestFirst(candidate, lists[best]![heads[best]!]!) < 0)) best = i;
    }
    if (best < 0) break;
    merged.push(lists[best]![heads[best]!++]!);
  }
  return merged;
}
