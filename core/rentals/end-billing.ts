import { removalAt } from '../billing/account-view.ts';
import { earliest, instanceCostUntil } from '../billing/charges.ts';
import { postEntry } from '../billing/ledger.ts';
import type { UnitOfWork } from '../ports/storage.ts';
import type { RentalsContext } from './context.ts';
import { ledgerDescription, type Instance } from './instance.ts';

/** The ledger posting that brings an instance's charges to `cost` (a refund when it paid more). */
export function settlementOf(instance: Instance, cost: number, key: string, at: Date) {
  const amount = instance.chargedCents - cost;
  return amount === 0
    ? null
    : {
        tenantId: instance.tenantId,
        kind: amount > 0 ? ('refund' as const) : ('usage' as const),
        amountCents: amount,
        reference: instance.id,
        description: ledgerDescription(amount > 0 ? 'unused time refunded' : 'usage beyond the paid time', instance),
        uniqueKey: key,
        at,
      };
}

/**
 * A line of 0 cents for a machine something other than its owner ended with nothing to refund or charge (in its
 * first hour, or at the end of a paid block): its own lines say only "first hour" and the like, so this one says
 * what ended it.
 */
const endedLine = (instance: Instance, at: Date) => ({
  tenantId: instance.tenantId,
  kind: 'refund' as const,
  amountCents: 0,
  reference: instance.id,
  description: ledgerDescription('ended, nothing left to refund', instance),
  uniqueKey: `final:${instance.id}`,
  at,
});

/**
 * Ends billing (refund or final charge), releases the unused commitment, and marks the status. Billing
 * ends at the earliest of `at`, the scheduled removal and the window end, so nothing is billed past the
 * time the caller asked the machine to go (nor past a capped token's window). A machine that never
 * started, or a failed rental, costs 0. `why` names what ended it in the ledger description, when not its owner
 * (on a line of its own when nothing is refunded).
 */
export async function endBilling(
  ctx: Pick<RentalsContext, 'clock' | 'ids'>,
  uow: UnitOfWork,
  instance: Instance,
  at: Date,
  status: 'terminating' | 'failed',
  failure: string | null = null,
  why: string | null = null,
): Promise<Instance> {
  const end = earliest(at, removalAt(instance))!;
  const cost = status === 'failed' || instance.startedAt === null ? 0 : instanceCostUntil(instance, end);
  // `why` (what ended it, when not its owner) joins the note in the settlement's description, not the instance
  const described = why === null ? instance : { ...instance, ledgerNote: instance.ledgerNote ? `${instance.ledgerNote}; ${why}` : why };
  const settlement = settlementOf(described, cost, `final:${instance.id}`, ctx.clock.now()) ?? (why === null ? null : endedLine(described, ctx.clock.now()));
  if (settlement) await postEntry(uow, ctx.ids, settlement);
  if (instance.commitmentCents > cost) await uow.tokens.addCommitment(instance.tokenId, cost - instance.commitmentCents);
  const ended: Instance = {
    ...instance,
    status,
    terminatedAt: end,
    paidUntil: end.getTime() > instance.paidUntil.getTime() ? end : instance.paidUntil,
    chargedCents: cost,
    commitmentCents: Math.min(instance.commitmentCents, cost),
    failure: failure ?? instance.failure,
  };
  await uow.instances.update(ended);
  await uow.volumes.detachFrom(instance.id); // volumes outlive their machines
  return ended;
}
