import { VOLUME_STORAGE } from '../metering/prices.ts';
import type { UnitOfWork } from '../ports/storage.ts';
import { recordStartedHours, type UsageRecorder } from './storage-hours.ts';
import type { Volume } from './volume.ts';

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

/**
 * A locked volume deleted at the provider, deleted at `at` (docs/decisions.md, "Volumes cost money"): its started
 * hours not recorded yet are recorded now, in this transaction, so what its storage cost is known, and its
 * commitment shrinks to that (what was charged, as a terminated machine's does); the rest is released on its chain.
 */
export async function deleteVolumeRow(uow: UnitOfWork, usage: UsageRecorder, locked: Volume, at: Date): Promise<Volume> {
  const { volume: metered } = await recordStartedHours(usage, uow, { ...locked, status: 'deleted', attachedInstanceId: null, deletedAt: at }, at);
  const charged = await uow.usage.chargedFor(metered.tenantId, VOLUME_STORAGE, metered.id, metered.createdAt);
  const deleted = await keepCommitment(uow, metered, charged);
  await uow.volumes.update(deleted);
  return deleted;
}
