import type { UnitOfWork } from '../ports/storage.ts';
import type { Reservation } from '../reservations/reservation.ts';
import { closeClaim } from '../spot/spot-claim-service.ts';
import { disableLapsedEndpoints } from '../webhooks/lapsed-endpoints.ts';

/** A pending claim has no machine: releasing it never ends billing. */
const NO_MACHINE = {
  endBilling: (): never => {
    throw new Error('a pending spot claim has no machine to end');
  },
};

/**
 * Ends a node of the tree of authority with its whole subtree (docs/decisions.md, "One tree of authority"), in the
 * caller's transaction: every token, session and person's link under it is revoked (a link ended is gone from the
 * tenant's people), its spot claims still pending are released and its reservations still scheduled are cancelled,
 * their commitments given back, and the webhook endpoints it registered are disabled (lapsed-endpoints.ts). Machines already running keep running: they are the tenant's, and ending a credential
 * is not a decision to stop work (terminate them for that). The account is locked before the tokens, as a rental
 * takes them. Answers the ids revoked: hand them to announceRevoked once the transaction committed.
 */
export async function endSubtree(uow: UnitOfWork, tenantId: string, nodeId: string, now: Date): Promise<string[]> {
  await uow.accounts.lock(tenantId, now);
  const subtree = (await uow.tokens.lockSubtree(tenantId, nodeId)).map((token) => token.id);
  const revoked = await uow.tokens.revokeSubtree(tenantId, nodeId, now);
  await releaseBookingsOf(uow, tenantId, subtree, now);
  await disableLapsedEndpoints(uow, tenantId, now);
  return revoked;
}

/** Releases the pending spot claims and cancels the scheduled reservations these tokens made. */
export async function releaseBookingsOf(uow: UnitOfWork, tenantId: string, tokenIds: readonly string[], now: Date): Promise<{ reservations: number; claims: number }> {
  let reservations = 0;
  let claims = 0;
  for (const reservation of await uow.reservations.lockOpenOf(tenantId, tokenIds)) {
    if (reservation.status !== 'scheduled') continue;
    await cancelForEndedCredential(uow, reservation);
    reservations++;
  }
  for (const claimId of await uow.spotClaims.openOf(tenantId, tokenIds)) {
    const claim = await uow.spotClaims.lock(tenantId, claimId);
    if (claim?.status !== 'pending' || claim.instanceId !== null) continue;
    await closeClaim(uow, NO_MACHINE, tenantId, claimId, 'released', now);
    claims++;
  }
  return { reservations, claims };
}

/**
 * A reservation not started whose credential ended (revoked, expired, timed out, removed) is cancelled, its commitment
 * given back along the chain: nobody is left to rent for. `reservation` is locked, scheduled or being started.
 */
export async function cancelForEndedCredential(uow: UnitOfWork, reservation: Reservation): Promise<void> {
  await uow.tokens.addCommitment(reservation.tokenId, -reservation.commitmentCents);
  await uow.reservations.update({ ...reservation, status: 'cancelled', commitmentCents: 0, failure: `the credential ${reservation.tokenId} ended` });
}
