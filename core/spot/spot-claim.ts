import type { TemplateSearch } from '../catalog/records.ts';
import type { Cents } from '../money.ts';
import type { InstanceStatus } from '../rentals/instance.ts';

/** Our spot claim ids (spc_…); each of a claim's rentals is keyed by `<claim id>:<its number>`. */
export const SPOT_CLAIM_ID_PREFIX = 'spc';

export const SPOT_CLAIM_LIMITS = { minHours: 1, maxHours: 720, maxGpuCount: 64 } as const;

/** What is stored; `preempted` is read from the claim's machine (see shownStatus). */
export type StoredSpotClaimStatus = 'pending' | 'active' | 'released' | 'expired';
export type SpotClaimStatus = StoredSpotClaimStatus | 'preempted';

/**
 * Interruptible capacity at a bid: the sweep rents the cheapest spot offer at or under the bid,
 * and when the provider takes the machine back, the next one, until the claim is released or its hours end. It
 * holds at most one machine at a time.
 */
export interface SpotClaim {
  id: string;
  tenantId: string;
  /** The token that made it: its chain holds the commitment, and each rental is made as it. */
  tokenId: string;
  name: string;
  status: StoredSpotClaimStatus;
  /** The node asked for (tried first), or null when a search chooses. */
  nodeId: string | null;
  /** GET /v1/gpus filters, or null for a node_id claim. */
  search: TemplateSearch | null;
  /** A node_id claim's GPU type: when the node is gone or dearer than the bid, offers of this type and count are rented. */
  gpuType: string | null;
  /** The machine's exact GPU count. */
  gpuCount: number;
  bidCentsPerGpuHour: Cents;
  hours: number | null;
  /** created_at + hours: the machine is removed then and the claim expires; null: until released. */
  endsAt: Date | null;
  /** What it holds on its token chain: bid x gpu_count x hours while open, what it spent (at most that) once ended. */
  commitmentCents: Cents;
  templateId: string | null;
  sshKeyId: string | null;
  /** Its machine now (active), or its last one once released or expired; null while pending. */
  instanceId: string | null;
  /** Rentals made so far: the next one's idempotency key is `<id>:<machines + 1>`. */
  machines: number;
  preemptions: number;
  /** What the machines it no longer holds cost in all; its current (or last) machine's charges are added to it. */
  endedChargedCents: Cents;
  /** Why the last pass could not rent a machine (nothing at or under the bid, funds short): shown while pending. */
  lastError: string | null;
  /** When a sweep took it up (a pass that died leaves it, taken up again once stale). */
  claimedAt: Date | null;
  createdAt: Date;
  endedAt: Date | null;
}

/** A claim with its current (or last) machine, as stored. */
export interface SpotClaimView extends SpotClaim {
  rental: { status: InstanceStatus; chargedCents: Cents; preemptedAt: Date | null } | null;
}

/** Billing has ended for the machine: the claim may go on to its next one. */
export const billingEnded = (status: InstanceStatus): boolean => status === 'terminating' || status === 'terminated' || status === 'failed';

/** `preempted`: its machine was taken back and the sweep has not yet put the claim back to pending. */
export function shownStatus(view: SpotClaimView): SpotClaimStatus {
  if (view.status === 'active' && view.rental?.preemptedAt) return 'preempted';
  return view.status;
}

/** Every charge of the claim's machines, refunds taken off. */
export const chargedCents = (view: SpotClaimView): Cents => view.endedChargedCents + (view.instanceId && view.rental ? view.rental.chargedCents : 0);

/** Named in the description of every ledger entry of the claim's machines. */
export const ledgerNoteOf = (claimId: string): string => `spot claim ${claimId}`;

/** The idempotency key of the claim's n-th rental: two sweeps racing make it once. */
export const rentalKeyOf = (claim: Pick<SpotClaim, 'id' | 'machines'>): string => `${claim.id}:${claim.machines + 1}`;
