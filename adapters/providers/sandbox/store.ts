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
  sshPublicKey: string | null;
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
}

/** What has happened to one offer of the generated catalog; an offer without state is as generated. */
export interface OfferState {
  /** Machines that hold one unit of its availability now. */
  taken: number;
  withdrawn: boolean;
  /** A new price set by the host (repriceOffer), or null for the generated one. */
  priceUsdPerHour: string | null;
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
  /** Marks it terminated at `at` and frees the unit it held; a no-op for one already terminated or unknown. */
  terminate(machineId: string, at: number): Promise<void>;
  /** Removes it without a trace, freeing the unit it held if it was live (lost upstream). */
  remove(machineId: string): Promise<void>;
}
