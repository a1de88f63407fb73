import type { Cents } from '../money.ts';
import type { Offer } from '../market/offer.ts';
import { perGpuCents } from '../market/pricing.ts';
import type { Instance, InstanceRecovery } from '../rentals/instance.ts';
import type { RentalOptionsRequest } from '../rentals/rental-options.ts';

/** How many replacements a rental may ask for. */
export const MAX_RECOVERY_ATTEMPTS = 10;

/** What a rental asks of managed recovery (POST /v1/instances `recovery`). */
export interface RecoveryRequest {
  maxAttempts: number;
  /** A rental made by search: its price ceiling holds every replacement; absent, the first machine's per-GPU rate does. */
  maxPricePerGpuCents?: Cents | null;
}

/**
 * watching: its machine is live or ended as asked; due: the reconciler found it lost, preempted or failed at its
 * provider; recovering: a runner took it up; recovered: replaced (replaced_by); failed: not replaced (failure says why).
 */
export type RecoveryStatus = 'watching' | 'due' | 'recovering' | 'recovered' | 'failed';

/** What every replacement of a chain must be: the first machine's GPUs, at least its CPUs, RAM and disk, at no more than its per-GPU rate. */
export interface ReplacementSpec {
  gpuType: string;
  gpuCount: number;
  minCpus: number;
  minRamGb: number;
  minDiskGb: number;
  ceilingPerGpuCents: Cents;
}

/** The rental's own options, asked again of each replacement (volumes aside: those follow the machine when they can). */
export type RecoveryOptions = Omit<RentalOptionsRequest, 'volumeIds' | 'terminationHours'>;

/** One machine's recovery: a row per instance of a chain, the spec and options copied along it. */
export interface Recovery {
  instanceId: string;
  tenantId: string;
  status: RecoveryStatus;
  maxAttempts: number;
  /** Replacements still allowed after this machine: the first has max_attempts, each replacement one fewer. */
  attemptsLeft: number;
  spec: ReplacementSpec;
  options: RecoveryOptions;
  /** This machine's provider and region: its volumes follow a replacement only to the same ones. */
  provider: string;
  region: string | null;
  replaces: string | null;
  replacedBy: string | null;
  /** Volumes of the machine it replaces that stayed behind (the replacement is at another provider or region). */
  leftVolumeIds: string[];
  failure: string | null;
  dueAt: Date | null;
  claimedAt: Date | null;
  createdAt: Date;
}

/** A first rental's recovery: the offer it rents sets what every replacement must match. */
export function firstRecovery(instance: Instance, offer: Offer, asked: RecoveryRequest, options: RecoveryOptions): Recovery {
  const rate = perGpuCents(instance.rateCentsPerHour, instance.gpuCount);
  return {
    instanceId: instance.id,
    tenantId: instance.tenantId,
    status: 'watching',
    maxAttempts: asked.maxAttempts,
    attemptsLeft: asked.maxAttempts,
    spec: {
      gpuType: offer.gpuType,
      gpuCount: offer.gpuCount,
      minCpus: offer.cpus,
      minRamGb: offer.ramGb,
      minDiskGb: offer.diskGb,
      ceilingPerGpuCents: asked.maxPricePerGpuCents ?? rate,
    },
    options,
    provider: instance.provider,
    region: offer.region,
    replaces: null,
    replacedBy: null,
    leftVolumeIds: [],
    failure: null,
    dueAt: null,
    claimedAt: null,
    createdAt: instance.createdAt,
  };
}

/** A replacement's recovery: the chain's spec and options, one attempt fewer. */
export function replacementRecovery(lost: Recovery, replacement: Instance, region: string | null, leftVolumeIds: string[]): Recovery {
  return {
    ...lost,
    instanceId: replacement.id,
    status: 'watching',
    attemptsLeft: lost.attemptsLeft - 1,
    provider: replacement.provider,
    region,
    replaces: lost.instanceId,
    replacedBy: null,
    leftVolumeIds,
    failure: null,
    dueAt: null,
    claimedAt: null,
    createdAt: replacement.createdAt,
  };
}

export const recoveryView = (r: Recovery): InstanceRecovery => ({
  maxAttempts: r.maxAttempts,
  attemptsLeft: r.attemptsLeft,
  failure: r.failure,
  replaces: r.replaces,
  replacedBy: r.replacedBy,
  leftVolumeIds: r.leftVolumeIds,
});

/** What a replacement is, in words, for a failure that says none was found. */
export const describeSpec = (s: ReplacementSpec): string =>
  `${s.gpuCount} x ${s.gpuType} with at least ${s.minCpus} CPUs, ${s.minRamGb} GB RAM and ${s.minDiskGb} GB disk at or under ${s.ceilingPerGpuCents} cents per GPU-hour`;
