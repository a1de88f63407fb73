import type { Cents } from '../money.ts';

/** Our instance ids (ins_…): the label every provider carries back, so a machine is known as ours. */
export const INSTANCE_ID_PREFIX = 'ins';
const INSTANCE_ID = /^ins_[a-z0-9]+$/;
export const isInstanceId = (label: unknown): label is string => typeof label === 'string' && INSTANCE_ID.test(label);

export type InstanceStatus = 'provisioning' | 'running' | 'rebooting' | 'terminating' | 'terminated' | 'failed';

/** Statuses in which a machine may exist upstream and is billed. */
export const LIVE_STATUSES: readonly InstanceStatus[] = ['provisioning', 'running', 'rebooting', 'terminating'];

export const isLive = (status: InstanceStatus): boolean => LIVE_STATUSES.includes(status);

export interface Instance {
  id: string;
  tenantId: string;
  /** The token that rented it; its chain carries the commitment. */
  tokenId: string;
  nodeId: string;
  provider: string;
  offerId: string;
  name: string | null;
  status: InstanceStatus;
  gpuType: string;
  gpuCount: number;
  rateCentsPerHour: Cents;
  createdAt: Date;
  startedAt: Date | null;
  /** Billing starts at creation; the rental is paid up to here. */
  paidUntil: Date;
  removalScheduledAt: Date | null;
  /** The end of the shutdown window (termination_hours), when one was asked for. */
  windowEndsAt: Date | null;
  terminatedAt: Date | null;
  /** The provider's id of the machine; null until the provider has answered. */
  machineId: string | null;
  sshHost: string | null;
  sshPort: number | null;
  /** The login user its machine stated (Machine.sshUser); null or absent: its provider's (docs/adding-a-provider.md). */
  sshUser?: string | null;
  idempotencyKey: string | null;
  requestDigest: string | null;
  /** Sum of this instance's ledger entries, as a positive cost. */
  chargedCents: Cents;
  /** What the rental committed against its token chain's spend caps. */
  commitmentCents: Cents;
  lastSeenAt: Date | null;
  /** Why the rental failed (the provider refused it, or it never started), shown to its owner. */
  failure: string | null;
  /** How the provider answered the create; null while the call is in flight (a retry with the key waits for it). */
  launch: LaunchOutcome | null;
  /** The container image it runs (a reference), when one was asked for. */
  image: string | null;
  /** The template it was rented from, and the saved SSH key it was given, when so. */
  templateId: string | null;
  sshKeyId: string | null;
  /** Our volume ids attached to it. */
  volumeIds: string[];
  /** What it was rented for ("reservation res_…"), named in the description of each of its ledger entries. */
  ledgerNote: string | null;
  /** The minimum charge in minutes: 60 (the first hour) on demand, 0 for a spot machine (billed by the started minute). */
  minimumMinutes: number;
  /** When the reconciler found its machine preempted (a spot machine the provider took back); null otherwise. */
  preemptedAt: Date | null;
  /** Its managed recovery (a replacement rented when the machine is lost, preempted or fails at its provider); null: none asked. */
  recovery: InstanceRecovery | null;
}

/** An instance's managed recovery as its owner sees it (docs/decisions.md, "Managed recovery"). */
export interface InstanceRecovery {
  maxAttempts: number;
  /** Replacements still allowed after this machine. */
  attemptsLeft: number;
  /** Why it was not replaced; null while it need not be, or once it was. */
  failure: string | null;
  /** The instance this one replaced, and the one that replaced it. */
  replaces: string | null;
  replacedBy: string | null;
  /** Volumes of the machine it replaced that it did not take (another provider or region). */
  leftVolumeIds: string[];
}

/** A ledger description of an instance's entry, naming what it was rented for when it was rented for something. */
export const ledgerDescription = (what: string, instance: Pick<Instance, 'ledgerNote'>): string =>
  instance.ledgerNote ? `${what} (${instance.ledgerNote})` : what;

export type LaunchOutcome = 'created' | 'ambiguous' | 'refused';
