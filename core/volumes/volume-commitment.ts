import type { UnitOfWork } from '../ports/storage.ts';
import { storageCentsPerHour } from './storage-cost.ts';
import type { Volume } from './volume.ts';

const HOUR_MS = 3_600_000;

/** When a volume's storage stops being billed: its deletion (or now), or the end of its window when that came first. */
export const billingEndOf = (volume: Volume, at: Date): Date => (volume.endsAt && volume.endsAt.getTime() < at.getTime() ? volume.endsAt : at);

/**
 * What a volume that stopped at `end` can still be charged at most: each started hour at its rate in whole cents
 * (an hour's record never adds more to its tenant's metered total). The commitment held on its token's chain
 * shrinks to this once it is deleted; the rest is released.
 */
export const costBoundUntil = (volume: Volume, end: Date): number =>
  storageCentsPerHour(volume) * Math.max(0, Math.ceil((end.getTime() - volume.createdAt.getTime()) / HOUR_MS));

/** Moves the volume's commitment to `kept` cents, releasing the difference on its token's chain. */
async function keepCommitment(uow: UnitOfWork, volume: Volume, kept: number): Promise<Volume> {
  const next = Math.min(volume.commitmentCents, kept);
  if (volume.tokenId && next !== volume.commitmentCents) await uow.tokens.addCommitment(volume.tokenId, next - volume.commitmentCents);
  return { ...volume, commitmentCents: next };
}

/** A locked volume the provider never made: failed, nothing billed, its whole commitment released. */
export async function failVolume(uow: UnitOfWork, locked: Volume): Promise<Volume> {
  const failed: Volume = { ...(await keepCommitment(uow, locked, 0)), status: 'failed' };
  await uow.volumes.update(failed);
  return failed;
}

/** A locked volume deleted at the provider: deleted at `at`, its commitment shrunk to what its storage can cost. */
export async function deleteVolumeRow(uow: UnitOfWork, locked: Volume, at: Date): Promise<Volume> {
  const kept = await keepCommitment(uow, locked, costBoundUntil(locked, billingEndOf(locked, at)));
  const deleted: Volume = { ...kept, status: 'deleted', attachedInstanceId: null, deletedAt: at };
  await uow.volumes.update(deleted);
  return deleted;
}
