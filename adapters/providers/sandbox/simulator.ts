import type { Offer } from '../../../core/market/offer.ts';
import { generateCatalog, offerIdAt, offerIndexOf } from './catalog.ts';
import { formatPriceUnits, parsePriceUnits } from './price.ts';
import { hash32, Rng } from './prng.ts';

/** A machine's life in the sandbox; `rebooting` and `running` are worked out from the clock. */
export type SandboxMachineStatus = 'provisioning' | 'running' | 'rebooting' | 'terminated' | 'failed';

export interface SandboxMachine {
  machineId: string;
  offerId: string;
  label: string | null;
  name: string;
  image: string;
  sshPublicKey: string | null;
  status: SandboxMachineStatus;
  sshHost: string | null;
  sshPort: number | null;
  priceUsdPerHour: string;
  createdAt: number;
}

export interface SandboxCloudOptions {
  seed: number;
  offers: number;
  provisioningMs: number;
  rebootMs: number;
  failureRate: number;
  terminatedRetentionMs: number;
  clock: () => number;
}

export interface CreateInput {
  offerId: string;
  label: string | null;
  name: string;
  image: string;
  sshPublicKey: string | null;
}

/** How a create ended: `ambiguous` did what the create would have done, only its answer was lost. */
export type CreateOutcome =
  | { kind: 'created'; machine: SandboxMachine }
  | { kind: 'rejected'; reason: string }
  | { kind: 'ambiguous'; reason: string; machineId: string | null };

export type InjectedCreateFailure = 'rejected' | 'ambiguous';
/** What happens to a machine instead of becoming ready: `failed` ends it, `stuck` never leaves provisioning. */
export type ProvisioningMishap = 'failed' | 'stuck';

/** What the cloud stores: the view callers get, less the status it derives from the clock, plus bookkeeping. */
interface MachineRecord extends Omit<SandboxMachine, 'status' | 'sshHost' | 'sshPort'> {
  sshHost: string;
  sshPort: number;
  readyAt: number;
  mishap: ProvisioningMishap | null;
  rebootUntil: number;
  terminatedAt: number | null;
  /** Whether it holds one unit of its offer's availability (foreign machines may not). */
  holdsCapacity: boolean;
}

/**
 * The simulated GPU cloud behind the sandbox provider: a seeded catalog, machines that become ready
 * on an injectable clock, and knobs that let tests and demos make it misbehave the ways real clouds do.
 * All state is in memory; it is lost when the process ends.
 */
export class SandboxCloud {
  readonly seed: number;
  /** Real time each offer listing takes; tests and demos may change it at any time. */
  latencyMs = 0;

  private readonly options: SandboxCloudOptions;
  private readonly catalog: readonly Offer[];
  private readonly machines = new Map<string, MachineRecord>();
  private readonly taken = new Map<string, number>();
  private readonly withdrawn = new Set<string>();
  private readonly repriced = new Map<string, string>();
  private readonly createFailures: InjectedCreateFailure[] = [];
  private readonly mishaps: ProvisioningMishap[] = [];
  private readFailures = 0;
  private readonly createRng: Rng;
  /** Machine ids carry the start time, so ids from an earlier run of the process are never reused. */
  private readonly idPrefix: string;
  private nextMachine = 1;

  constructor(options: SandboxCloudOptions) {
    this.options = options;
    this.seed = options.seed;
    this.catalog = generateCatalog(options.seed, options.offers);
    this.createRng = new Rng(hash32(options.seed, 0x5eed));
    this.idPrefix = `sbx-${Math.max(0, Math.trunc(options.clock())).toString(36)}`;
  }

  private now(): number {
    return this.options.clock();
  }

  // ---- the market ----------------------------------------------------------------------------

  /** Every listed offer, as it stands now (withdrawn ones are gone, taken capacity is subtracted). */
  listOffers(): Offer[] {
    const result: Offer[] = [];
    for (const base of this.catalog) {
      const id = base.id.slice(base.provider.length + 1);
      if (!this.withdrawn.has(id)) result.push(this.view(base, id));
    }
    return result;
  }

  getOffer(offerId: string): Offer | null {
    const index = offerIndexOf(offerId);
    const base = index === null ? undefined : this.catalog[index];
    if (!base || this.withdrawn.has(offerId)) return null;
    return this.view(base, offerId);
  }

  private view(base: Offer, offerId: string): Offer {
    return {
      ...base,
      priceUsdPerHour: this.repriced.get(offerId) ?? base.priceUsdPerHour,
      available: Math.max(0, base.available - (this.taken.get(offerId) ?? 0)),
      attributes: { ...base.attributes },
    };
  }

  // ---- machines ------------------------------------------------------------------------------

  create(input: CreateInput): CreateOutcome {
    const injected = this.createFailures.shift();
    if (injected === 'rejected') return { kind: 'rejected', reason: 'injected rejection' };
    const outcome = this.attemptCreate(input);
    if (injected !== 'ambiguous') return outcome;
    // The request reached the cloud and did whatever it would do; only its answer is lost.
    return {
      kind: 'ambiguous',
      reason: 'the answer to the create was lost',
      machineId: outcome.kind === 'created' ? outcome.machine.machineId : null,
    };
  }

  private attemptCreate(input: CreateInput): CreateOutcome {
    const offer = this.getOffer(input.offerId);
    if (!offer) return { kind: 'rejected', reason: `offer ${input.offerId} does not exist` };
    if (offer.available < 1) return { kind: 'rejected', reason: `offer ${input.offerId} has no capacity left` };
    if (this.options.failureRate > 0 && this.createRng.next() < this.options.failureRate) {
      return { kind: 'rejected', reason: 'the host declined the rental' };
    }
    return { kind: 'created', machine: this.snapshot(this.addMachine(input, offer, true)) };
  }

  private addMachine(input: CreateInput, offer: Offer, holdsCapacity: boolean): MachineRecord {
    const machineId = `${this.idPrefix}-${this.nextMachine++}`;
    const offerId = input.offerId;
    const hostId = Number(offer.attributes.host_id ?? 0);
    const createdAt = this.now();
    const record: MachineRecord = {
      machineId,
      offerId,
      label: input.label,
      name: input.name,
      image: input.image,
      sshPublicKey: input.sshPublicKey,
      priceUsdPerHour: offer.priceUsdPerHour,
      sshHost: documentationAddress(hostId),
      sshPort: 10_000 + (hash32(this.seed, hostId, this.nextMachine) % 50_000),
      createdAt,
      readyAt: createdAt + this.options.provisioningMs,
      mishap: this.mishaps.shift() ?? null,
      rebootUntil: 0,
      terminatedAt: null,
      holdsCapacity,
    };
    this.machines.set(machineId, record);
    if (holdsCapacity) this.taken.set(offerId, (this.taken.get(offerId) ?? 0) + 1);
    return record;
  }

  getMachine(machineId: string): SandboxMachine | null {
    const record = this.live(machineId);
    return record ? this.snapshot(record) : null;
  }

  /** Every machine not yet terminated, whoever made it. */
  listMachines(): SandboxMachine[] {
    const result: SandboxMachine[] = [];
    for (const record of [...this.machines.values()]) {
      if (record.terminatedAt === null) result.push(this.snapshot(record));
      else this.live(record.machineId); // forgets it once its retention is over
    }
    return result;
  }

  reboot(machineId: string): 'ok' | 'not_found' | 'not_running' {
    const record = this.live(machineId);
    if (!record || record.terminatedAt !== null) return 'not_found';
    const status = this.statusOf(record);
    if (status !== 'running' && status !== 'rebooting') return 'not_running';
    record.rebootUntil = this.now() + this.options.rebootMs;
    return 'ok';
  }

  /** Idempotent; frees the offer's capacity the machine held. */
  terminate(machineId: string): void {
    const record = this.machines.get(machineId);
    if (!record || record.terminatedAt !== null) return;
    record.terminatedAt = this.now();
    if (record.holdsCapacity) {
      const left = (this.taken.get(record.offerId) ?? 1) - 1;
      if (left > 0) this.taken.set(record.offerId, left);
      else this.taken.delete(record.offerId);
    }
  }

  /** A machine we still remember; terminated ones are forgotten after the retention period. */
  private live(machineId: string): MachineRecord | null {
    const record = this.machines.get(machineId);
    if (!record) return null;
    if (record.terminatedAt !== null && this.now() - record.terminatedAt >= this.options.terminatedRetentionMs) {
      this.machines.delete(machineId);
      return null;
    }
    return record;
  }

  private statusOf(record: MachineRecord): SandboxMachineStatus {
    if (record.terminatedAt !== null) return 'terminated';
    const now = this.now();
    if (record.mishap === 'stuck' || now < record.readyAt) return 'provisioning';
    if (record.mishap === 'failed') return 'failed';
    return now < record.rebootUntil ? 'rebooting' : 'running';
  }

  private snapshot(record: MachineRecord): SandboxMachine {
    const status = this.statusOf(record);
    const reachable = status === 'running';
    return {
      machineId: record.machineId,
      offerId: record.offerId,
      label: record.label,
      name: record.name,
      image: record.image,
      sshPublicKey: record.sshPublicKey,
      status,
      sshHost: reachable ? record.sshHost : null,
      sshPort: reachable ? record.sshPort : null,
      priceUsdPerHour: record.priceUsdPerHour,
      createdAt: record.createdAt,
    };
  }

  // ---- knobs for tests and demos --------------------------------------------------------------

  /** The next `count` creates fail: `rejected` makes nothing, `ambiguous` still makes the machine when it can. */
  failNextCreates(count: number, kind: InjectedCreateFailure): void {
    for (let i = 0; i < count; i++) this.createFailures.push(kind);
  }

  /** The next `count` reads (offers or machines) fail as if the cloud could not be reached. */
  failNextReads(count: number): void {
    this.readFailures += count;
  }

  /** Used by the adapter before each read: true when this read must fail. */
  takeReadFailure(): boolean {
    if (this.readFailures <= 0) return false;
    this.readFailures--;
    return true;
  }

  /** The next `count` machines created never become ready the normal way. */
  mishapNextProvisions(count: number, mishap: ProvisioningMishap): void {
    for (let i = 0; i < count; i++) this.mishaps.push(mishap);
  }

  /** The offer disappears from the market (someone else took it, or the host left). */
  withdrawOffer(offerId: string): void {
    this.withdrawn.add(offerId);
  }

  restoreOffer(offerId: string): void {
    this.withdrawn.delete(offerId);
  }

  /** The host changes its price; the text must be a plain decimal with at most 4 decimals. */
  repriceOffer(offerId: string, priceUsdPerHour: string): void {
    const units = parsePriceUnits(priceUsdPerHour);
    if (units === null) throw new RangeError(`not a sandbox price: ${priceUsdPerHour}`);
    this.repriced.set(offerId, formatPriceUnits(units));
  }

  /** The machine vanishes upstream without anyone terminating it (host failure, provider cleanup). */
  loseMachine(machineId: string): void {
    this.terminate(machineId);
    this.machines.delete(machineId);
  }

  /**
   * A machine someone made on the account outside the control plane (another tool, the web console):
   * it is listed upstream but carries no label of ours, or whatever label is given.
   */
  addForeignMachine(label: string | null, offerId: string = offerIdAt(0)): string {
    const offer = this.getOffer(offerId) ?? this.catalog[0]!;
    const record = this.addMachine(
      { offerId, label, name: 'made elsewhere', image: DEFAULT_IMAGE, sshPublicKey: null },
      offer,
      false,
    );
    return record.machineId;
  }
}

export const DEFAULT_IMAGE = 'nvidia/cuda:12.8.1-runtime-ubuntu24.04';

/**
 * SSH addresses come from the documentation ranges (RFC 5737): they look real in a demo and can
 * never reach anyone's machine.
 */
function documentationAddress(hostId: number): string {
  const nets = ['192.0.2', '198.51.100', '203.0.113'] as const;
  return `${nets[hostId % nets.length]}.${1 + (hostId % 254)}`;
}
