import { bookingRentRequest } from '../bookings/booking-rental.ts';
import { DomainError } from '../errors.ts';
import { recoveryEvent } from '../events/instance-events.ts';
import type { PricedNode } from '../market/node-chooser.ts';
import { perGpuCents } from '../market/pricing.ts';
import type { MarketFilter } from '../market/search-filter.ts';
import type { Instance } from '../rentals/instance.ts';
import type { Adoption, RentRequest } from '../rentals/rent-request.ts';
import { replacementRecovery, type Recovery, type ReplacementSpec } from './recovery.ts';

/** The market filter a replacement is chosen by: the first machine's GPUs, at least its CPUs, RAM and disk, within the ceiling. */
export const replacementFilter = (spec: ReplacementSpec): MarketFilter => ({
  gpuType: spec.gpuType,
  gpuCount: spec.gpuCount,
  minCpus: spec.minCpus,
  minRamGb: spec.minRamGb,
  minDiskGb: spec.minDiskGb,
  maxPricePerGpuCents: spec.ceilingPerGpuCents,
  extra: [],
});

/** Whether a node is one a replacement may be: the filter's GPUs exactly, within the ceiling. */
export const fits = (spec: ReplacementSpec, node: PricedNode): boolean =>
  node.offer.gpuType === spec.gpuType && node.offer.gpuCount === spec.gpuCount && node.perGpuCents <= spec.ceilingPerGpuCents;

/** Its volumes follow the machine only to the same provider and region (a volume lives where it was made). */
export const sameSite = (recovery: Recovery, node: PricedNode): boolean => recovery.provider === node.node.provider.name && recovery.region === node.offer.region;

/** The one replacement of a machine, whoever rents it: a retry after a crash answers the rental made the first time. */
export const replacementKey = (lostId: string): string => `recovery:${lostId}`;

/**
 * The replacement's rental: the rental's own options asked again (image, template, keys, env, ports, startup
 * script), its volumes when they can follow, for the hours left to the same window end.
 */
export function replacementRequest(recovery: Recovery, lost: Instance, node: PricedNode, now: Date): RentRequest {
  const { options } = recovery;
  return {
    ...bookingRentRequest({ name: lost.name ?? '', sshKeyId: options.sshKeyId, templateId: options.templateId, endsAt: lost.windowEndsAt }, node.node.id, replacementKey(lost.id), now),
    ...options,
    name: lost.name,
    volumeIds: sameSite(recovery, node) ? lost.volumeIds : [],
    recovery: null,
  };
}

/** The node's live price is above what every replacement is held to: the next node is tried. */
export class AboveCeiling extends DomainError {
  constructor(nodeId: string, perGpu: number, ceiling: number) {
    super('CONFLICT', `node ${nodeId} costs ${perGpu} cents per GPU-hour now, above the ${ceiling} the first machine cost`);
  }
}

/** Another runner settled this recovery meanwhile (it took a stale claim up): nothing more to do here. */
export class NotRecovering extends DomainError {
  constructor(instanceId: string, status: string) {
    super('CONFLICT', `the recovery of ${instanceId} is ${status}; nothing was rented`);
  }
}

/**
 * The replacement records itself in the rental's own transaction: the lost machine's recovery is marked recovered
 * (replaced_by), the replacement's own is added one attempt fewer, and `instance.recovered` is told. It passes the
 * spend gate as any rental of the original's token does, its window ending where the original's did.
 */
export function replacementAdoption(recovery: Recovery, lost: Instance, node: PricedNode): Adoption {
  const leftVolumeIds = sameSite(recovery, node) ? [] : lost.volumeIds;
  return {
    heldCents: 0,
    windowEndsAt: lost.windowEndsAt,
    ledgerNote: `recovery of ${lost.id}`,
    async adopt(uow, instance) {
      const locked = await uow.recoveries.lock(recovery.instanceId);
      if (!locked || locked.status !== 'recovering') throw new NotRecovering(recovery.instanceId, locked?.status ?? 'gone');
      const perGpu = perGpuCents(instance.rateCentsPerHour, instance.gpuCount);
      if (perGpu > locked.spec.ceilingPerGpuCents) throw new AboveCeiling(instance.nodeId, perGpu, locked.spec.ceilingPerGpuCents);
      const next = replacementRecovery(locked, instance, node.offer.region, leftVolumeIds);
      await uow.recoveries.update({ ...locked, status: 'recovered', replacedBy: instance.id, claimedAt: null });
      await uow.recoveries.add(next);
      await uow.events.emit(recoveryEvent(lost, { replacement: instance, attemptsLeft: next.attemptsLeft, leftVolumeIds }, instance.createdAt));
    },
  };
}
