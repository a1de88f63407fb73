import { nodeRefused } from '../bookings/booking-rental.ts';
import { DomainError, messageOf } from '../errors.ts';
import { recoveryEvent } from '../events/instance-events.ts';
import { MAX_NODES_TRIED, type NodeChooser, type PricedNode } from '../market/node-chooser.ts';
import type { Clock } from '../ports/clock.ts';
import type { Storage } from '../ports/storage.ts';
import type { Instance } from '../rentals/instance.ts';
import type { RentalService } from '../rentals/rental-service.ts';
import type { Token } from '../tenancy/token.ts';
import { describeSpec, type Recovery } from './recovery.ts';
import { AboveCeiling, fits, NotRecovering, replacementAdoption, replacementFilter, replacementRequest } from './replacement.ts';

/** How long after a machine was found lost a recovery that could not reach a provider or the market is retried. */
const RETRY_FOR_MS = 15 * 60_000;

export type RecoveryOutcome = 'recovered' | 'failed' | 'retry' | 'settled';

export interface RecoveryContext {
  storage: Storage;
  clock: Clock;
  rentals: Pick<RentalService, 'rent'>;
  chooser: NodeChooser;
}

/** What the runner gives one recovery: the token by id (read once a pass), and word of a retry before it is queued again. */
export interface RecoveryTurn {
  tokenOf(id: string): Promise<Token | null>;
  /** Called before the recovery is put back as due, so this runner does not take it up again in this pass. */
  retrying(why: string): void;
}

/**
 * One due recovery, taken up by this runner (recovering): the cheapest node that matches the first machine within
 * its per-GPU rate, and that has not lost a machine of this chain already, is rented through the same path as POST /v1/instances, as the token that rented the lost
 * machine, keyed by the lost machine's id; a node gone or dearer now gives way to the next (at most
 * MAX_NODES_TRIED). No node, no attempts left, a window ended, a cap or a balance short: the recovery fails with
 * why and is not tried again. A provider or market that cannot be reached: tried again next pass, for a while.
 */
export async function recoverMachine(ctx: RecoveryContext, recovery: Recovery, turn: RecoveryTurn): Promise<RecoveryOutcome> {
  const now = ctx.clock.now();
  const lost = await ctx.storage.read((uow) => uow.instances.get(recovery.tenantId, recovery.instanceId));
  if (!lost) return fail(ctx, recovery, null, 'the instance is gone');
  const caller = await turn.tokenOf(lost.tokenId);
  if (recovery.attemptsLeft <= 0) return fail(ctx, recovery, lost, `no attempts left: it was replaced ${recovery.maxAttempts} times already (max_attempts)`);
  if (lost.windowEndsAt && now.getTime() >= lost.windowEndsAt.getTime()) return fail(ctx, recovery, lost, 'its shutdown window has ended');
  if (!caller) return fail(ctx, recovery, lost, 'the token that rented it is gone');

  let last: unknown = null;
  let gaveWay = false;
  let candidates: PricedNode[];
  let lostOn: Set<string>;
  try {
    // a node that lost a machine of this chain is not rented again for it: the next cheapest is
    lostOn = new Set(await ctx.storage.read((uow) => uow.recoveries.chainNodes(recovery.instanceId)));
    candidates = (await ctx.chooser.cheapest(replacementFilter(recovery.spec), MAX_NODES_TRIED + lostOn.size))
      .filter((node) => fits(recovery.spec, node) && !lostOn.has(node.node.id))
      .slice(0, MAX_NODES_TRIED);
  } catch (error) {
    return retryOrFail(ctx, recovery, lost, error, turn);
  }
  for (const node of candidates) {
    try {
      await ctx.rentals.rent(caller, replacementRequest(recovery, lost, node, ctx.clock.now()), replacementAdoption(recovery, lost, node));
      return 'recovered';
    } catch (error) {
      last = error;
    }
    if (last instanceof NotRecovering) return 'settled';
    // the rental may have committed before it failed (the provider refused the machine): that replacement is recovered in turn
    const current = await ctx.storage.transaction((uow) => uow.recoveries.lock(recovery.instanceId));
    if (current?.status === 'recovered' && current.replacedBy) {
      await ctx.storage.transaction((uow) => uow.recoveries.markDue(current.replacedBy!, ctx.clock.now()));
      return 'recovered';
    }
    if (current?.status !== 'recovering') return 'settled';
    gaveWay = await missed(ctx, last, node);
    if (!gaveWay) break;
  }
  const none = `no ${last === null ? '' : 'other '}node of ${describeSpec(recovery.spec)} now${lostOn.size > 0 ? ` but ${[...lostOn].join(', ')}, which lost a machine of this chain` : ''}`;
  if (last === null) return fail(ctx, recovery, lost, none);
  if (!(last instanceof DomainError) || last.code === 'UPSTREAM_UNAVAILABLE' || last.code === 'MARKET_UNAVAILABLE') return retryOrFail(ctx, recovery, lost, last, turn);
  return fail(ctx, recovery, lost, gaveWay ? `${messageOf(last)}; ${none}` : messageOf(last));
}

/** Whether a rental failed because of the node itself (gone, or dearer than the ceiling): another may do. */
async function missed(ctx: RecoveryContext, error: unknown, node: PricedNode): Promise<boolean> {
  if (error instanceof AboveCeiling) return true;
  if (!nodeRefused(error)) return false;
  return (await ctx.chooser.quote(node.node).catch(() => undefined)) === null;
}

/** Upstream or database trouble: tried again next pass, until RETRY_FOR_MS after the machine was found lost. */
async function retryOrFail(ctx: RecoveryContext, recovery: Recovery, lost: Instance, error: unknown, turn: RecoveryTurn): Promise<RecoveryOutcome> {
  const since = recovery.dueAt ?? recovery.createdAt;
  if (ctx.clock.now().getTime() >= since.getTime() + RETRY_FOR_MS) return fail(ctx, recovery, lost, messageOf(error));
  turn.retrying(messageOf(error));
  await ctx.storage.transaction(async (uow) => {
    const locked = await uow.recoveries.lock(recovery.instanceId);
    if (locked?.status === 'recovering') await uow.recoveries.update({ ...locked, status: 'due', claimedAt: null });
  });
  return 'retry';
}

/** Not replaced, with why; told once (`instance.recovery_failed`), and not tried again. */
async function fail(ctx: RecoveryContext, recovery: Recovery, lost: Instance | null, why: string): Promise<RecoveryOutcome> {
  return ctx.storage.transaction(async (uow) => {
    const locked = await uow.recoveries.lock(recovery.instanceId);
    if (!locked || locked.status !== 'recovering') return 'settled';
    await uow.recoveries.update({ ...locked, status: 'failed', failure: `not replaced: ${why}`, claimedAt: null });
    if (lost) await uow.events.emit(recoveryEvent(lost, { failure: `not replaced: ${why}`, attemptsLeft: locked.attemptsLeft }, ctx.clock.now()));
    return 'failed';
  });
}
