import { billedNow } from '../../billing/account-view.ts';
import { isolated } from '../../billing/isolated.ts';
import { idleTimeoutEvent } from '../../events/token-events.ts';
import { inParallelBy } from '../../in-parallel.ts';
import type { Clock } from '../../ports/clock.ts';
import type { Storage, UnitOfWork } from '../../ports/storage.ts';
import type { Instance } from '../../rentals/instance.ts';
import { closeClaim } from '../../spot/spot-claim-service.ts';
import type { Token } from '../../tenancy/token.ts';
import type { PassCounts } from '../pass-report.ts';
import type { SweepStep } from '../step.ts';
import type { SweepRentals } from '../sweep-rentals.ts';
import { disableLapsedEndpoints } from '../../webhooks/lapsed-endpoints.ts';

/** Tells every replica that tokens stopped working, as a revocation does (TenancyService.announceRevoked). */
export interface RevocationAnnouncer {
  announceRevoked(tokenIds: readonly string[]): Promise<void>;
}

export type IdleTokensReport = Pick<PassCounts, 'idleTimeouts'> & { errors: string[] };

/** Tokens read per batch; a pass takes batches until none is left or its budget is over. */
const BATCH = 100;

/**
 * `idle-tokens`, the dead-man switch (docs/decisions.md, "Dead-man switch"): a token past its idle deadline ends
 * with its subtree, in one transaction under the account's lock: every machine rented under them is billed to the
 * deadline (the unused prepaid time refunded), their reservations not yet over are cancelled, their spot claims
 * released, the tokens revoked, and the webhook endpoints they registered disabled. Every replica then forgets them; the machines are removed upstream a few at a
 * time per provider, as the removals are, and what the budget leaves is the reconciler's next pass.
 */
export const idleTokens = (deps: { storage: Storage; clock: Clock; rentals: SweepRentals; tenancy: RevocationAnnouncer; providerConcurrency: number }): SweepStep<IdleTokensReport> => ({
  name: 'idle-tokens',
  report: () => ({ idleTimeouts: 0, errors: [] }),
  async run(report, { budget }) {
    const now = deps.clock.now();
    const tried = new Set<string>();
    const ended: Instance[] = [];
    while (!budget.over()) {
      const due = (await deps.storage.read((uow) => uow.tokens.idleCandidates(now, BATCH + tried.size)))
        .filter((token) => !tried.has(token.id))
        // at one deadline (a child's activity wrote its issuer's too) the issuer goes first, its subtree with it
        .sort((a, b) => a.idleDeadlineAt!.getTime() - b.idleDeadlineAt!.getTime() || a.ancestorIds.length - b.ancestorIds.length);
      if (due.length === 0) break;
      for (const token of due) {
        tried.add(token.id);
        await isolated(report.errors, `idle timeout of ${token.id}`, async () => {
          const outcome = await deps.storage.transaction((uow) => endIdleToken(uow, deps.rentals, token, now));
          if (!outcome) return;
          report.idleTimeouts++;
          await deps.tenancy.announceRevoked(outcome.tokenIds);
          ended.push(...outcome.instances);
        });
      }
    }
    await inParallelBy(ended, (instance) => instance.provider, deps.providerConcurrency, async (instance) => {
      if (!budget.over()) await isolated(report.errors, `removal of ${instance.id}`, () => deps.rentals.removeUpstream(instance));
    });
  },
});

/**
 * Ends an idle token and its subtree in the caller's transaction, or answers null when it is not idle any more
 * (activity recorded since it was read, a revocation). The account is locked first and the tokens then in id order,
 * as a rental takes them, so a rent under the subtree either committed before (its machine is ended here) or sees
 * the tokens revoked.
 */
export async function endIdleToken(
  uow: UnitOfWork,
  rentals: Pick<SweepRentals, 'endBilling'>,
  candidate: Token,
  now: Date,
): Promise<{ tokenIds: string[]; instances: Instance[] } | null> {
  const tenantId = candidate.tenantId;
  await uow.accounts.lock(tenantId, now);
  const subtree = await uow.tokens.lockSubtree(tenantId, candidate.id);
  const token = subtree.find((t) => t.id === candidate.id);
  const deadline = token?.idleDeadlineAt ?? null;
  if (!token || token.revokedAt !== null || token.idledAt !== null || deadline === null || deadline.getTime() > now.getTime()) return null;

  const ids = subtree.map((t) => t.id);
  const why = `token ${token.id} timed out idle`;
  const instances: Instance[] = [];
  for (const live of billedNow(await uow.instances.live(tenantId)).filter((instance) => ids.includes(instance.tokenId))) {
    const locked = await uow.instances.lock(tenantId, live.id);
    if (!locked || billedNow([locked]).length === 0) continue;
    // a machine made after the deadline (a start racing the pass) is billed as from its creation
    const at = locked.createdAt.getTime() > deadline.getTime() ? locked.createdAt : deadline;
    instances.push(await rentals.endBilling(uow, locked, at, 'terminating', null, why));
  }
  const ended = new Set(instances.map((instance) => instance.id));

  const reservationsCancelled: string[] = [];
  for (const reservation of await uow.reservations.lockOpenOf(tenantId, ids)) {
    if (reservation.status === 'active') {
      // a window under way ends with its machine; one whose machine is gone already has ended
      if (!reservation.instanceId || !ended.has(reservation.instanceId)) continue;
      await uow.reservations.update({ ...reservation, status: 'cancelled', failure: why });
    } else {
      await uow.tokens.addCommitment(reservation.tokenId, -reservation.commitmentCents);
      await uow.reservations.update({ ...reservation, status: 'cancelled', commitmentCents: 0, failure: why });
    }
    reservationsCancelled.push(reservation.id);
  }

  const spotClaimsReleased = await uow.spotClaims.openOf(tenantId, ids);
  // their machines were ended above, at the deadline: the claim is released then too
  for (const claimId of spotClaimsReleased) await closeClaim(uow, rentals, tenantId, claimId, 'released', deadline);

  const tokensEnded = await uow.tokens.markIdle(tenantId, ids, deadline);
  await disableLapsedEndpoints(uow, tenantId, now);
  await uow.events.emit(
    idleTimeoutEvent(token, deadline, { tokensEnded, instancesTerminated: [...ended], reservationsCancelled, spotClaimsReleased }, now),
  );
  return { tokenIds: ids, instances };
}
