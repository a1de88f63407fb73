/** What happens to a machine instead of becoming ready: `failed` ends it, `stuck` never leaves provisioning. */
export type ProvisioningMishap = 'failed' | 'stuck';

/** One machine as the simulated cloud keeps it; times are milliseconds on the sandbox clock. */
export interface MachineRecord {
  machineId: string;
  /** Order of creation, for listings and the SSH port. */
  serial: number;
  offerId: string;
  label: string | null;
  name: string;
  image: string;
  /** What the create asked for beyond the machine, kept as the cloud would run it. */
  options: MachineRecordOptions;
  priceUsdPerHour: string;
  sshHost: string;
  sshPort: number;
  createdAt: number;
  readyAt: number;
  mishap: ProvisioningMishap | null;
  rebootUntil: number;
  terminatedAt: number | null;
  /** Whether it holds one unit of its offer's availability (foreign machines may not). */
  holdsCapacity: boolean;
  /** A spot machine's bid, whole machine, in 1/10000 USD per hour (price.ts); null for an on-demand machine. */
  spotBidUnits: number | null;
  /** When a spot machine is (or will be) preempted, as far as the market tells now; null: not foreseen. */
  preemptAt: number | null;
}

/** A create's options as the simulated cloud keeps them; the registry password only as a SHA-256 digest. */
export interface MachineRecordOptions {
  sshPublicKeys: string[];
  registryUsername: string | null;
  registryPasswordSha256: string | null;
  command: string | null;
  env: Record<string, string>;
  ports: number[];
  startupScript: string | null;
  volumeIds: string[];
}

export const NO_OPTIONS: MachineRecordOptions = {
  sshPublicKeys: [],
  registryUsername: null,
  registryPasswordSha256: null,
  command: null,
  env: {},
  ports: [],
  startupScript: null,
  volumeIds: [],
};

/** One network volume of the simulated cloud; times are milliseconds on the sandbox clock. */
export interface VolumeRecord {
  volumeId: string;
  /** Our volume id, as a real cloud keeps it in the volume's name or tag. */
  label: string;
  name: string;
  region: string;
  sizeGb: number;
  createdAt: number;
}

/** What has happened to one offer of the generated catalog; an offer without state is as generated. */
export interface OfferState {
  /** Machines that hold one unit of its availability now. */
  taken: number;
  withdrawn: boolean;
  /** A new price set by the host (repriceOffer), or null for the generated one. */
  priceUsdPerHour: string | null;
  /** A spot price a test pinned (setSpotPrice): it stands instead of the seeded walk until cleared; null: the walk. */
  spotPriceUsdPerHour: string | null;
}

/**
 * Where the sandbox keeps what changes: machines and the state of offers. The catalog itself is not here:
 * it is generated from the seed. Inside a control plane this is the control plane's own database, so a
 * restart continues every machine and every process on that database sees one simulated cloud.
 * Each write that two processes could race on is one atomic step.
 */
export interface SandboxStore {
  offerStates(): Promise<Map<string, OfferState>>;
  offerState(offerId: string): Promise<OfferState | null>;
  setWithdrawn(offerId: string, withdrawn: boolean): Promise<void>;
  setPrice(offerId: string, priceUsdPerHour: string): Promise<void>;
  setSpotPrice(offerId: string, spotPriceUsdPerHour: string | null): Promise<void>;
  /** A machine id never handed out before by this store, and its serial. */
  nextMachine(): Promise<{ machineId: string; serial: number }>;
  /**
   * Stores the machine. With `capacity` (the offer's generated availability) it takes one unit of the offer
   * in the same step, and stores nothing (false) when none is left or the offer was withdrawn.
   */
  addMachine(record: MachineRecord, capacity: number | null): Promise<boolean>;
  machine(machineId: string): Promise<MachineRecord | null>;
  /** Machines not terminated, in order of creation; forgets those terminated at or before `forgetBefore`. */
  liveMachines(forgetBefore: number): Promise<MachineRecord[]>;
  setRebootUntil(machineId: string, until: number): Promise<void>;
  /** Live spot machines of the offer, in order of creation. */
  liveSpotMachines(offerId: string): Promise<MachineRecord[]>;
  /**
   * Moves a live spot machine's preemption to `at` (null: none foreseen), unless it is preempted already at
   * `now`: a machine the market took back is never given back. Answers whether it moved.
   */
  reschedulePreemption(machineId: string, at: number | null, now: number): Promise<boolean>;
  /** Any live machine, spot or on demand, is taken back at `now` (a host reclaimed); false when it is not live or was taken back already. */
  reclaim(machineId: string, now: number): Promise<boolean>;
  /** Marks it terminated at `at` and frees the unit it held; a no-op for one already terminated or unknown. */
  terminate(machineId: string, at: number): Promise<void>;
  /** Removes it without a trace, freeing the unit it held if it was live (lost upstream). */
  remove(machineId: string): Promise<void>;
  /** A volume id never handed out before by this store. */
  nextVolumeId(): Promise<string>;
  addVolume(record: VolumeRecord): Promise<void>;
  volume(volumeId: string): Promise<VolumeRecord | null>;
  /** Every volume, in order of creation. */
  allVolumes(): Promise<VolumeRecord[]>;
  /** Whether a machine not terminated has it attached. */
  volumeInUse(volumeId: string): Promise<boolean>;
  /** In one step: `in_use` (nothing deleted) while a machine not terminated has it, else deleted (or already gone). */
  deleteVolume(volumeId: string): Promise<'deleted' | 'gone' | 'in_use'>;
}
