import type { Cents } from '../money.ts';
import type { Instance } from '../rentals/instance.ts';
import { earliest, instanceCostUntil, nextBoundary } from './charges.ts';

/** How far ahead stops_at looks before it says "not within a year" (null). */
const HORIZON_MS = 366 * 24 * 3_600_000;
/** Guards the stepping against a pathological account (10,000 machines x a year is never walked). */
const MAX_STEPS = 200_000;

export interface AccountFigures {
  balanceCents: Cents;
  owedCents: Cents;
  availableCents: Cents;
  burnCentsPerHour: Cents;
  stopsAt: Date | null;
  paidToRemoval: boolean;
  runningMachines: number;
}

/** When a live instance is removed by itself: its scheduled removal or the end of its window. */
export const removalAt = (instance: Instance): Date | null => earliest(instance.removalScheduledAt, instance.windowEndsAt);

/** Usage that ran and is not paid: an instance past its paid block accrues by the started minute. */
export function owedBy(instance: Instance, now: Date): Cents {
  if (instance.paidUntil.getTime() >= now.getTime()) return 0;
  const end = earliest(now, removalAt(instance))!;
  return Math.max(0, instanceCostUntil(instance, end) - instance.chargedCents);
}

/** A billed machine whose next hour block is due now and not paid: the sweep could not pay it from the balance. */
export const hasUnpaidBlockDue = (instance: Instance, now: Date): boolean => {
  const removal = removalAt(instance);
  return billedNow([instance]).length === 1 && instance.paidUntil.getTime() <= now.getTime() && (removal === null || instance.paidUntil.getTime() < removal.getTime());
};

/** Machines that cost money now: every live instance that is not being terminated. */
export const billedNow = (instances: readonly Instance[]): Instance[] =>
  instances.filter((i) => i.status === 'provisioning' || i.status === 'running' || i.status === 'rebooting');

/**
 * The account as its owner sees it: owed, available, burn, and stops_at, found by stepping
 * through the running machines' block boundaries in time order until the available funds no longer
 * cover the block due. `unsettledUsageCents` (metered usage not yet posted to the ledger) is owed at once,
 * and stops_at steps from the balance left once it is paid.
 */
export function accountFigures(
  balanceCents: Cents,
  liveInstances: readonly Instance[],
  now: Date,
  options: { stopsAt?: boolean; unsettledUsageCents?: Cents } = {},
): AccountFigures {
  const running = billedNow(liveInstances);
  const usageCents = options.unsettledUsageCents ?? 0;
  const machinesOwedCents = running.reduce((sum, i) => sum + owedBy(i, now), 0);
  const owedCents = machinesOwedCents + usageCents;
  const availableCents = balanceCents - owedCents;
  const burnCentsPerHour = running.reduce((sum, i) => sum + i.rateCentsPerHour, 0);
  const paidToRemoval =
    running.length > 0 && running.every((i) => {
      const at = removalAt(i);
      return at !== null && i.paidUntil.getTime() >= at.getTime();
    });
  return {
    balanceCents,
    owedCents,
    availableCents,
    burnCentsPerHour,
    stopsAt: running.length === 0 || paidToRemoval || options.stopsAt === false ? null : stopsAt(balanceCents - usageCents, machinesOwedCents, running, now),
    paidToRemoval,
    runningMachines: running.length,
  };
}

/** The first block boundary, from now on, whose charge the funds left by then do not cover. */
export function stopsAt(balanceCents: Cents, owedCents: Cents, running: readonly Instance[], now: Date): Date | null {
  // each machine's next boundary: its paid_until, or now when it already runs past it
  const queue = running
    .map((i) => ({ i, paidUntil: i.paidUntil, charged: i.chargedCents, removal: removalAt(i) }))
    .filter((s) => s.removal === null || s.paidUntil.getTime() < s.removal.getTime());
  // the whole balance: what is owed is paid from it by the first blocks stepped below
  let funds = balanceCents;
  const horizon = now.getTime() + HORIZON_MS;
  // enough to run every machine to the horizon and beyond: no need to walk a year of blocks
  const hoursAhead = Math.ceil(HORIZON_MS / 3_600_000) + 2;
  const upperBound = owedCents + running.reduce((sum, i) => sum + i.rateCentsPerHour * hoursAhead, 0);
  if (funds >= upperBound) return null;
  for (let step = 0; step < MAX_STEPS && queue.length > 0; step++) {
    let next = 0;
    for (let k = 1; k < queue.length; k++) if (queue[k]!.paidUntil.getTime() < queue[next]!.paidUntil.getTime()) next = k;
    const due = queue[next]!;
    const at = due.paidUntil.getTime() < now.getTime() ? now : due.paidUntil;
    if (at.getTime() > horizon) return null;
    const boundary = nextBoundary(due.paidUntil, due.removal);
    const charge = instanceCostUntil(due.i, boundary) - due.charged;
    if (funds < charge) return at;
    funds -= charge;
    due.charged += charge;
    due.paidUntil = boundary;
    if (due.removal && boundary.getTime() >= due.removal.getTime()) queue.splice(next, 1);
  }
  return null;
}
