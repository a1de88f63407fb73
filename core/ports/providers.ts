import type { Offer } from '../market/offer.ts';
import type { StandardFilter } from '../market/search-filter.ts';

/**
 * `preempted`: an interruptible machine (SpotMarket) the provider took back, because its spot price rose over the
 * bid or it reclaimed the capacity; told apart from a machine that stopped, failed or vanished for other reasons.
 * It may still exist upstream (stopped, its disk billed): whoever sees it terminates it.
 */
export type MachineStatus = 'provisioning' | 'running' | 'rebooting' | 'stopped' | 'preempted' | 'terminated' | 'failed' | 'unknown';

/** A machine as the provider reports it. */
export interface Machine {
  /** The provider's own id of the machine (its contract, pod or instance id). */
  machineId: string;
  /** Our instance id, read back from the field we put it in (label, name, tag); null if absent. */
  label: string | null;
  status: MachineStatus;
  sshHost: string | null;
  sshPort: number | null;
  /**
   * The login user where the provider states one per machine (a reseller whose machines come from many clouds);
   * absent or null: the user its module states for all its machines.
   */
  sshUser?: string | null;
  /** The provider's current whole-machine price, exact decimal USD per hour, when it reports one. */
  priceUsdPerHour: string | null;
}

export interface CreateMachineRequest {
  /** The provider's own offer id (the part of Offer.id after "<provider>:"). */
  offerId: string;
  /** Our instance id: goes into every field the provider echoes back, so a reconciler can find it. */
  label: string;
  name: string;
  /** OpenSSH public keys to install, one per entry (`ssh_keys`); empty: none. */
  sshPublicKeys: string[];
  /** Container or OS image (`custom_image`); adapters pick a sensible default when null. */
  image: string | null;
  /** Credentials of a private registry for `image` (`registry_auth`). */
  registryAuth: { username: string; password: string } | null;
  /** The container's command, overriding the image's (`command`). */
  command: string | null;
  /** Environment variables for the machine's container (`env`). */
  env: Record<string, string>;
  /** Container ports to expose (`ports`). */
  ports: number[];
  /** A shell script run once the machine is up (`startup_script`). */
  startupScript: string | null;
  /** The provider's own ids of volumes to attach, in the machine's region (`volumes`). */
  volumeIds: string[];
}

/**
 * What a create can carry out at a provider, beyond the machine itself: each is listed in a node's and an
 * instance's `supported_operations`; a rental that asks for one its provider lacks answers 409 naming both.
 */
export const MACHINE_OPTIONS = ['custom_image', 'registry_auth', 'command', 'env', 'ports', 'startup_script', 'ssh_keys', 'volumes'] as const;
export type MachineOption = (typeof MACHINE_OPTIONS)[number];

/**
 * A failure talking to a provider, classified for the rental flow:
 * - `rejected`: the provider definitely did not create anything (4xx, validation, no capacity);
 * - `ambiguous`: something may exist upstream (timeout, 5xx after sending a create, lost response);
 * - `unavailable`: the provider could not be reached or answered with an error for a read.
 */
export type ProviderFailureKind = 'rejected' | 'ambiguous' | 'unavailable';

export class ProviderFailure extends Error {
  readonly provider: string;
  readonly kind: ProviderFailureKind;
  readonly status: number | null;

  constructor(provider: string, kind: ProviderFailureKind, message: string, status: number | null = null) {
    super(`${provider}: ${message}`);
    this.name = 'ProviderFailure';
    this.provider = provider;
    this.kind = kind;
    this.status = status;
  }
}

/** The small interface every upstream GPU cloud adapter implements. */
export interface Provider {
  /** Lower-case provider name, the prefix of its offer ids ("<name>:<offer id>"). */
  readonly name: string;
  /** The create options this provider carries out (see MACHINE_OPTIONS). */
  readonly machineOptions: readonly MachineOption[];
  /** `extra_filters` keys this provider understands; matched against Offer.attributes. */
  readonly extraFilterKeys: readonly string[];
  /**
   * Standard search filters on fields this provider never reports (a cloud that states no download speed):
   * they are not applied to its offers and are reported in its `ignored_filters`.
   */
  readonly unfilterable?: readonly StandardFilter[];
  /** Every offer the provider lists now (the snapshot refresh calls this; filtering is ours). */
  listOffers(signal?: AbortSignal): Promise<Offer[]>;
  /** Whether `offerId` has the form of this provider's offer ids (no call made): a malformed id is bad input, not a gone node. */
  isOfferId(offerId: string): boolean;
  /** One offer, checked live (the price a rental pays); null when it is gone. */
  getOffer(offerId: string, signal?: AbortSignal): Promise<Offer | null>;
  createMachine(request: CreateMachineRequest): Promise<Machine>;
  /** null when the provider no longer knows the machine. */
  getMachine(machineId: string): Promise<Machine | null>;
  /** Every machine of ours on this account (those carrying one of our labels). */
  listMachines(): Promise<Machine[]>;
  /** Idempotent: a machine that is already gone counts as terminated. */
  terminateMachine(machineId: string): Promise<void>;
}

export interface Rebootable {
  rebootMachine(machineId: string): Promise<void>;
}

/** Providers that can remove a machine by themselves at a given time. */
export interface SelfRemoving {
  scheduleRemoval(machineId: string, at: Date): Promise<void>;
  cancelScheduledRemoval(machineId: string): Promise<void>;
}

/** A volume as the provider keeps it. */
export interface UpstreamVolume {
  /** The provider's own id of the volume (a network volume's id, a filesystem's name or id). */
  volumeId: string;
  /** Our volume id, read back from the field we put it in (name); null if absent. */
  label: string | null;
  region: string;
  sizeGb: number;
  status: 'creating' | 'available' | 'in_use' | 'deleting' | 'error';
}

/** Where volumes can be made, and what they cost: exact decimal USD per GB-month. */
export interface VolumeOffer {
  region: string;
  priceUsdPerGbMonth: string;
}

/** Providers with persistent network storage that outlives machines (a capability port). */
export interface VolumeHost {
  volumeOffers(): Promise<VolumeOffer[]>;
  /** `label` is our volume id, kept in whatever field the provider echoes (name, tag) so it can be found again. */
  createVolume(request: { label: string; name: string; sizeGb: number; region: string }): Promise<UpstreamVolume>;
  /** null when the provider no longer knows it. */
  getVolume(volumeId: string): Promise<UpstreamVolume | null>;
  /**
   * Every volume of ours on this account (those carrying one of our volume ids as label): the volume reconciler
   * adopts those whose create had no answer and deletes those nobody pays for. A failed read throws, never answers [].
   */
  listVolumes(): Promise<UpstreamVolume[]>;
  /** Idempotent: a volume that is already gone counts as deleted. A volume still attached upstream is refused (ProviderFailure rejected). */
  deleteVolume(volumeId: string): Promise<void>;
}

/** A create at a bid on a provider's spot market. */
export interface SpotMachineRequest extends CreateMachineRequest {
  /**
   * The most the machine may cost, whole machine, exact decimal USD per hour ("0.42"), in the units of
   * Offer.spotPriceUsdPerHour: a bid at or over the offer's spot price runs, one under it is refused.
   */
  bidUsdPerHour: string;
}

/**
 * Providers with a spot market (a capability port): their offers carry `spotPriceUsdPerHour`
 * (listOffers and getOffer), and a machine can be made interruptible at a bid. The provider may take it back
 * whenever its spot price rises over the bid, or when it reclaims the capacity: the machine then reads
 * `preempted` in getMachine and listMachines.
 */
export interface SpotMarket {
  /**
   * An interruptible machine at `bidUsdPerHour`. ProviderFailure `rejected` when the offer has no spot market, or the
   * bid is under its spot price (nothing is left running upstream); `ambiguous` as for createMachine.
   */
  createSpotMachine(request: SpotMachineRequest): Promise<Machine>;
}

export const isSpotMarket = (provider: Provider): provider is Provider & SpotMarket =>
  typeof (provider as Partial<SpotMarket>).createSpotMachine === 'function';

export const isVolumeHost = (provider: Provider): provider is Provider & VolumeHost =>
  typeof (provider as Partial<VolumeHost>).createVolume === 'function';

export const isRebootable = (provider: Provider): provider is Provider & Rebootable =>
  typeof (provider as Partial<Rebootable>).rebootMachine === 'function';

export const isSelfRemoving = (provider: Provider): provider is Provider & SelfRemoving =>
  typeof (provider as Partial<SelfRemoving>).scheduleRemoval === 'function';

/** The operations a caller can ask of an instance on this provider, for InstanceOut.supported_operations. */
export const supportedOperations = (provider: Provider): string[] => [
  'terminate',
  ...(isRebootable(provider) ? ['reboot'] : []),
  // Removal at a time is always offered: the control plane's sweep owns the TTL where the provider cannot.
  'schedule_removal',
  ...(isSpotMarket(provider) ? ['spot'] : []),
  ...provider.machineOptions,
];
