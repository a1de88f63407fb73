import { createHash } from 'node:crypto';
import type { Offer } from '../../../core/market/offer.ts';
import type { CreateMachineRequest } from '../../../core/ports/providers.ts';
import { generateCatalog, offerIdAt, offerIndexOf } from './catalog.ts';
import { LOCATIONS } from './locations.ts';
import { formatPriceUnits, parsePriceUnits, PRICE_SCALE } from './price.ts';
import { hash32, Rng } from './prng.ts';
import { hourOf, SpotModel } from './spot.ts';
import {
  NO_OPTIONS,
  type MachineRecord,
  type MachineRecordOptions,
  type OfferState,
  type ProvisioningMishap,
  type SandboxStore,
  type VolumeRecord,
} from './store.ts';

/** A machine's life in the sandbox; `rebooting`, `running` and `preempted` are worked out from the clock. */
export type SandboxMachineStatus = 'provisioning' | 'running' | 'rebooting' | 'preempted' | 'terminated' | 'failed';

export interface SandboxMachine {
  machineId: string;
  offerId: string;
  label: string | null;
  name: string;
  image: string;
  /** What the create asked for beyond the machine, as the cloud keeps it (the registry password as a digest). */
  options: MachineRecordOptions;
  status: SandboxMachineStatus;
  sshHost: string | null;
  sshPort: number | null;
  priceUsdPerHour: string;
  /** A spot machine's bid, whole machine, USD per hour (to 4 decimals, as the sandbox keeps prices); null: on demand. */
  spotBidUsdPerHour: string | null;
  createdAt: number;
}

export interface SandboxCloudOptions {
  seed: number;
  offers: number;
  provisioningMs: number;
  rebootMs: number;
  failureRate: number;
  terminatedRetentionMs: number;
  /** Rate of spot preemptions whatever the price, per machine-hour (drawn from the seed); 0: only by price. */
  spotPreemptionsPerHour: number;
  clock: () => number;
}

/** What a create may ask for beyond the machine: the sandbox carries out every option a real cloud does. */
/** volumeIds: sandbox volume ids; each must exist, in the region of the offer. */
export type CreateOptions = Omit<CreateMachineRequest, 'offerId' | 'label' | 'name' | 'image'>;

export interface CreateInput {
  offerId: string;
  label: string | null;
  name: string;
  image: string;
  options?: Partial<CreateOptions>;
  /** An interruptible machine at this bid, whole machine, exact decimal USD per hour. */
  spotBidUsdPerHour?: string;
}

/** A sandbox volume as it stands: `inUse` while a machine not terminated has it attached. */
export interface SandboxVolume extends VolumeRecord {
  inUse: boolean;
}

/** Every region sandbox hosts sit in: the places volumes can be made. */
export const VOLUME_REGIONS: readonly string[] = [...new Set(LOCATIONS.map((location) => location.region))];
const MAX_VOLUME_GB = 10_000;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const IMAGE_REFERENCE = /^[^\s]{1,1024}$/;

/** Why the cloud would refuse these options on this offer, or null when it can run them. */
function optionsProblem(image: string, options: Partial<CreateOptions>): string | null {
  if (!IMAGE_REFERENCE.test(image)) return `image must be 1 to 1024 characters without spaces`;
  if (options.registryAuth && (!options.registryAuth.username || !options.registryAuth.password)) {
    return 'registry credentials need a username and a password';
  }
  for (const key of options.sshPublicKeys ?? []) if (/[\r\n\0]/.test(key.trim()) || key.trim() === '') return 'each SSH public key must be one non-empty line';
  for (const name of Object.keys(options.env ?? {})) if (!ENV_NAME.test(name)) return `"${name}" is not an environment variable name`;
  for (const port of options.ports ?? []) if (!Number.isInteger(port) || port < 1 || port > 65_535) return `port ${port} is not from 1 to 65535`;
  return null;
}

/** A bid as the sandbox keeps prices: 1/10000 USD, rounded down (a bid of 0.12349 does not cover 0.1235); null: not a decimal. */
function bidUnitsOf(text: string): number | null {
  const match = /^(\d{1,9})(?:\.(\d+))?$/.exec(text);
  if (!match) return null;
  return Number(match[1]) * PRICE_SCALE + Number((match[2] ?? '').padEnd(4, '0').slice(0, 4));
}

const minOf = (a: number | null, b: number | null): number | null => (a === null ? b : b === null ? a : Math.min(a, b));

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The options as the cloud keeps them: copies, the password only as its digest. */
const keptOptions = (options: Partial<CreateOptions>): MachineRecordOptions => ({
  sshPublicKeys: (options.sshPublicKeys ?? []).map((key) => key.trim()),
  registryUsername: options.registryAuth?.username ?? null,
  registryPasswordSha256: options.registryAuth ? sha256(options.registryAuth.password) : null,
  command: options.command ?? null,
  env: { ...(options.env ?? {}) },
  ports: [...new Set(options.ports ?? [])],
  startupScript: options.startupScript ?? null,
  volumeIds: [...new Set(options.volumeIds ?? [])],
});

/** How a create ended: `ambiguous` did what the create would have done, only its answer was lost. */
export type CreateOutcome =
  | { kind: 'created'; machine: SandboxMachine }
  | { kind: 'rejected'; reason: string }
  | { kind: 'ambiguous'; reason: string; machineId: string | null };

export type InjectedCreateFailure = 'rejected' | 'ambiguous';
export type { ProvisioningMishap } from './store.ts';

/**
 * The simulated GPU cloud behind the sandbox provider: a seeded catalog, machines that become ready
 * on an injectable clock, and knobs that let tests and demos make it misbehave the ways real clouds do.
 * What changes (machines, taken capacity, withdrawn and repriced offers) lives in `store`: inside a
 * control plane that is its database, so machines outlive a restart and every process sees the same
 * cloud. The injected-failure queues and the latency are this process's own test knobs.
 */
export class SandboxCloud {
  readonly seed: number;
  /** Real time each offer listing takes; tests and demos may change it at any time. */
  latencyMs = 0;

  private readonly options: SandboxCloudOptions;
  private readonly store: SandboxStore;
  private readonly catalog: readonly Offer[];
  private readonly createFailures: InjectedCreateFailure[] = [];
  private readonly mishaps: ProvisioningMishap[] = [];
  private readFailures = 0;
  private readonly createRng: Rng;
  private readonly spot: SpotModel;
  /** The generated price of each offer in 1/10000 USD, read once: the spot price is worked out from it. */
  private readonly baseUnits: Float64Array;

  constructor(options: SandboxCloudOptions, store: SandboxStore) {
    this.options = options;
    this.store = store;
    this.seed = options.seed;
    this.catalog = generateCatalog(options.seed, options.offers);
    this.createRng = new Rng(hash32(options.seed, 0x5eed));
    this.spot = new SpotModel(options.seed, options.offers);
    this.baseUnits = Float64Array.from(this.catalog, (offer) => parsePriceUnits(offer.priceUsdPerHour)!);
  }

  private now(): number {
    return this.options.clock();
  }

  // ---- the market ----------------------------------------------------------------------------

  /** Every listed offer, as it stands now (withdrawn ones are gone, taken capacity is subtracted). */
  async listOffers(): Promise<Offer[]> {
    const states = await this.store.offerStates();
    const hour = hourOf(this.now());
    const result: Offer[] = [];
    for (let index = 0; index < this.catalog.length; index++) {
      const base = this.catalog[index]!;
      const state = states.get(offerIdAt(index));
      if (!state?.withdrawn) result.push(view(base, state, this.spotUnits(index, state, hour)));
    }
    return result;
  }

  async getOffer(offerId: string): Promise<Offer | null> {
    const index = offerIndexOf(offerId);
    const base = index === null ? undefined : this.catalog[index];
    if (!base) return null;
    const state = await this.store.offerState(offerId);
    return state?.withdrawn ? null : view(base, state, this.spotUnits(index!, state, hourOf(this.now())));
  }

  /** The offer's on-demand price now, in 1/10000 USD. */
  private priceUnits(index: number, state: OfferState | null | undefined): number {
    return state?.priceUsdPerHour ? parsePriceUnits(state.priceUsdPerHour)! : this.baseUnits[index]!;
  }

  /** The offer's spot price in the hour: a pinned one, else the seeded walk; null when it has no spot market. */
  private spotUnits(index: number, state: OfferState | null | undefined, hour: number): number | null {
    if (state?.spotPriceUsdPerHour) return parsePriceUnits(state.spotPriceUsdPerHour);
    return this.spot.spotUnits(index, this.priceUnits(index, state), hour);
  }

  /** The generated offer behind an id, or null when the id is not one of this catalog's. */
  private base(offerId: string): Offer | undefined {
    const index = offerIndexOf(offerId);
    return index === null ? undefined : this.catalog[index];
  }

  // ---- machines ------------------------------------------------------------------------------

  async create(input: CreateInput): Promise<CreateOutcome> {
    const injected = this.createFailures.shift();
    if (injected === 'rejected') return { kind: 'rejected', reason: 'injected rejection' };
    const outcome = await this.attemptCreate(input);
    if (injected !== 'ambiguous') return outcome;
    // The request reached the cloud and did whatever it would do; only its answer is lost.
    return {
      kind: 'ambiguous',
      reason: 'the answer to the create was lost',
      machineId: outcome.kind === 'created' ? outcome.machine.machineId : null,
    };
  }

  private async attemptCreate(input: CreateInput): Promise<CreateOutcome> {
    const offer = await this.getOffer(input.offerId);
    if (!offer) return { kind: 'rejected', reason: `offer ${input.offerId} does not exist` };
    if (input.spotBidUsdPerHour !== undefined) {
      const refusal = spotRefusal(offer, input.spotBidUsdPerHour);
      if (refusal) return { kind: 'rejected', reason: refusal };
    }
    if (offer.available < 1) return { kind: 'rejected', reason: `offer ${input.offerId} has no capacity left` };
    const problem = optionsProblem(input.image, input.options ?? {}) ?? (await this.volumesProblem(input.options?.volumeIds ?? [], offer));
    if (problem) return { kind: 'rejected', reason: problem };
    if (this.options.failureRate > 0 && this.createRng.next() < this.options.failureRate) {
      return { kind: 'rejected', reason: 'the host declined the rental' };
    }
    const record = await this.addMachine(input, offer, this.base(input.offerId)!.available);
    // another process took the last unit between the check and the create
    if (!record) return { kind: 'rejected', reason: `offer ${input.offerId} has no capacity left` };
    return { kind: 'created', machine: this.snapshot(record) };
  }

  /** Stores a new machine; with `capacity` it takes one unit of the offer, or makes nothing (null) when none is left. */
  private async addMachine(input: CreateInput, offer: Offer, capacity: number | null): Promise<MachineRecord | null> {
    const { machineId, serial } = await this.store.nextMachine();
    const hostId = Number(offer.attributes.host_id ?? 0);
    const createdAt = this.now();
    const bidUnits = input.spotBidUsdPerHour === undefined ? null : bidUnitsOf(input.spotBidUsdPerHour);
    const record: MachineRecord = {
      machineId,
      serial,
      offerId: input.offerId,
      label: input.label,
      name: input.name,
      image: input.image,
      options: input.options ? keptOptions(input.options) : NO_OPTIONS,
      // a spot machine pays the market's spot price at its start, not its bid
      priceUsdPerHour: bidUnits === null ? offer.priceUsdPerHour : offer.spotPriceUsdPerHour!,
      sshHost: documentationAddress(hostId),
      sshPort: 10_000 + (hash32(this.seed, hostId, serial) % 50_000),
      createdAt,
      readyAt: createdAt + this.options.provisioningMs,
      mishap: this.mishaps.shift() ?? null,
      rebootUntil: 0,
      terminatedAt: null,
      holdsCapacity: capacity !== null,
      spotBidUnits: bidUnits,
      preemptAt: bidUnits === null ? null : await this.preemptionAt(input.offerId, serial, createdAt, bidUnits, createdAt),
    };
    if (await this.store.addMachine(record, capacity)) return record;
    if (record.mishap) this.mishaps.unshift(record.mishap); // used up only by a machine that exists
    return null;
  }

  async getMachine(machineId: string): Promise<SandboxMachine | null> {
    const record = await this.live(machineId);
    return record ? this.snapshot(record) : null;
  }

  /** Every machine not yet terminated, whoever made it. */
  async listMachines(): Promise<SandboxMachine[]> {
    const records = await this.store.liveMachines(this.now() - this.options.terminatedRetentionMs);
    return records.map((record) => this.snapshot(record));
  }

  async reboot(machineId: string): Promise<'ok' | 'not_found' | 'not_running'> {
    const record = await this.live(machineId);
    if (!record || record.terminatedAt !== null) return 'not_found';
    const status = this.statusOf(record);
    if (status !== 'running' && status !== 'rebooting') return 'not_running';
    await this.store.setRebootUntil(machineId, this.now() + this.options.rebootMs);
    return 'ok';
  }

  // ---- the spot market -------------------------------------------------------------------------

  /**
   * When a spot machine is preempted, seen from `fromMs`: its seeded random moment, or the first moment its offer's
   * spot price is over the bid (a pinned price over it: at once; the walk: the first hour it is), whichever is first.
   */
  private async preemptionAt(offerId: string, serial: number, createdAt: number, bidUnits: number, fromMs: number): Promise<number | null> {
    const random = this.spot.randomPreemptionAt(serial, createdAt, this.options.spotPreemptionsPerHour);
    const index = offerIndexOf(offerId);
    if (index === null || !this.catalog[index]) return minOf(random, fromMs);
    const state = await this.store.offerState(offerId);
    let byPrice: number | null;
    if (state?.spotPriceUsdPerHour) byPrice = parsePriceUnits(state.spotPriceUsdPerHour)! > bidUnits ? fromMs : null;
    else if (!this.spot.hasMarket(index)) byPrice = fromMs; // its spot market is gone: the capacity is reclaimed
    else byPrice = this.spot.firstOverBid(index, this.priceUnits(index, state), bidUnits, fromMs);
    return minOf(random, byPrice);
  }

  /** After the offer's price or spot price changed: each live spot machine on it is preempted when the new market says. */
  private async reschedule(offerId: string): Promise<void> {
    const now = this.now();
    for (const record of await this.store.liveSpotMachines(offerId)) {
      const at = await this.preemptionAt(offerId, record.serial, record.createdAt, record.spotBidUnits!, now);
      await this.store.reschedulePreemption(record.machineId, at, now);
    }
  }

  /** Idempotent; frees the offer's capacity the machine held. */
  async terminate(machineId: string): Promise<void> {
    await this.store.terminate(machineId, this.now());
  }

  // ---- volumes ---------------------------------------------------------------------------------

  /** Why these volumes cannot be attached to a machine of `offer`, or null when they all can (same region). */
  private async volumesProblem(volumeIds: string[], offer: Offer): Promise<string | null> {
    for (const volumeId of volumeIds) {
      const volume = await this.store.volume(volumeId);
      if (!volume) return `volume ${volumeId} does not exist`;
      if (volume.region !== offer.region) return `volume ${volumeId} is in ${volume.region}, the offer in ${offer.region ?? 'no region'}`;
    }
    return null;
  }

  async createVolume(input: { label: string; name: string; sizeGb: number; region: string }): Promise<SandboxVolume | { rejected: string }> {
    if (!VOLUME_REGIONS.includes(input.region)) return { rejected: `no region ${input.region}; volumes are made in ${VOLUME_REGIONS.join(', ')}` };
    if (!Number.isInteger(input.sizeGb) || input.sizeGb < 1 || input.sizeGb > MAX_VOLUME_GB) {
      return { rejected: `size must be a whole number of GB from 1 to ${MAX_VOLUME_GB}` };
    }
    const record: VolumeRecord = { volumeId: await this.store.nextVolumeId(), ...input, createdAt: this.now() };
    await this.store.addVolume(record);
    return { ...record, inUse: false };
  }

  async getVolume(volumeId: string): Promise<SandboxVolume | null> {
    const record = await this.store.volume(volumeId);
    return record ? { ...record, inUse: await this.store.volumeInUse(volumeId) } : null;
  }

  /** Idempotent, but never while a machine not terminated has it attached. */
  /** Every volume of the account, in order of creation. */
  async listVolumes(): Promise<SandboxVolume[]> {
    const volumes: SandboxVolume[] = [];
    for (const record of await this.store.allVolumes()) volumes.push({ ...record, inUse: await this.store.volumeInUse(record.volumeId) });
    return volumes;
  }

  async deleteVolume(volumeId: string): Promise<'deleted' | 'gone' | 'in_use'> {
    return this.store.deleteVolume(volumeId);
  }

  /** A machine we still remember; terminated ones are forgotten after the retention period. */
  private async live(machineId: string): Promise<MachineRecord | null> {
    const record = await this.store.machine(machineId);
    if (!record) return null;
    if (record.terminatedAt !== null && this.now() - record.terminatedAt >= this.options.terminatedRetentionMs) return null;
    return record;
  }

  private statusOf(record: MachineRecord): SandboxMachineStatus {
    if (record.terminatedAt !== null) return 'terminated';
    const now = this.now();
    if (record.preemptAt !== null && now >= record.preemptAt) return 'preempted';
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
      options: record.options,
      status,
      sshHost: reachable ? record.sshHost : null,
      sshPort: reachable ? record.sshPort : null,
      priceUsdPerHour: record.priceUsdPerHour,
      spotBidUsdPerHour: record.spotBidUnits === null ? null : formatPriceUnits(record.spotBidUnits),
      createdAt: record.createdAt,
    };
  }

  // ---- knobs for tests and demos --------------------------------------------------------------

  /** The next `count` creates in this process fail: `rejected` makes nothing, `ambiguous` still makes the machine when it can. */
  failNextCreates(count: number, kind: InjectedCreateFailure): void {
    for (let i = 0; i < count; i++) this.createFailures.push(kind);
  }

  /** The next `count` reads (offers or machines) in this process fail as if the cloud could not be reached. */
  failNextReads(count: number): void {
    this.readFailures += count;
  }

  /** Used by the adapter before each read: true when this read must fail. */
  takeReadFailure(): boolean {
    if (this.readFailures <= 0) return false;
    this.readFailures--;
    return true;
  }

  /** The next `count` machines created in this process never become ready the normal way. */
  mishapNextProvisions(count: number, mishap: ProvisioningMishap): void {
    for (let i = 0; i < count; i++) this.mishaps.push(mishap);
  }

  /** The offer disappears from the market (someone else took it, or the host left). */
  async withdrawOffer(offerId: string): Promise<void> {
    await this.store.setWithdrawn(offerId, true);
  }

  async restoreOffer(offerId: string): Promise<void> {
    await this.store.setWithdrawn(offerId, false);
  }

  /** The host changes its price; the text must be a plain decimal with at most 4 decimals (else a RangeError). */
  async repriceOffer(offerId: string, priceUsdPerHour: string): Promise<void> {
    const units = parsePriceUnits(priceUsdPerHour);
    if (units === null) throw new RangeError(`not a sandbox price: ${priceUsdPerHour}`);
    await this.store.setPrice(offerId, formatPriceUnits(units));
    await this.reschedule(offerId); // the walking spot price is a share of the on-demand one
  }

  /**
   * Pins the offer's spot price (a plain decimal with at most 4 decimals, else a RangeError), giving it a spot market
   * if it had none: its spot machines bidding under it are preempted now; null goes back to the seeded walk.
   */
  async setSpotPrice(offerId: string, spotPriceUsdPerHour: string | null): Promise<void> {
    const units = spotPriceUsdPerHour === null ? null : parsePriceUnits(spotPriceUsdPerHour);
    if (units === null && spotPriceUsdPerHour !== null) throw new RangeError(`not a sandbox price: ${spotPriceUsdPerHour}`);
    await this.store.setSpotPrice(offerId, units === null ? null : formatPriceUnits(units));
    await this.reschedule(offerId);
  }

  /** The cloud takes a spot machine back now, whatever its bid; false for a machine that is not a live spot machine. */
  async preemptMachine(machineId: string): Promise<boolean> {
    const now = this.now();
    if (await this.store.reschedulePreemption(machineId, now, now)) return true;
    // not moved: not a live spot machine, or one preempted already
    const record = await this.store.machine(machineId);
    return record !== null && record.terminatedAt === null && record.spotBidUnits !== null;
  }

  /**
   * The cloud takes any live machine back now, on demand too, as a host reclaimed for maintenance: it reports it
   * preempted until it is terminated. False for a machine that is not live.
   */
  async reclaimMachine(machineId: string): Promise<boolean> {
    if (await this.store.reclaim(machineId, this.now())) return true;
    const record = await this.store.machine(machineId);
    return record !== null && record.terminatedAt === null;
  }

  /** The machine vanishes upstream without anyone terminating it (host failure, provider cleanup). */
  async loseMachine(machineId: string): Promise<void> {
    await this.store.remove(machineId);
  }

  /**
   * A machine someone made on the account outside the control plane (another tool, the web console):
   * it is listed upstream but carries no label of ours, or whatever label is given.
   */
  async addForeignMachine(label: string | null, offerId: string = offerIdAt(0)): Promise<string> {
    const offer = (await this.getOffer(offerId)) ?? this.catalog[0]!;
    const record = await this.addMachine({ offerId, label, name: 'made elsewhere', image: DEFAULT_IMAGE }, offer, null);
    return record!.machineId;
  }
}

/** Why a spot create at this bid is refused on the offer, or null when the bid covers its spot price. */
function spotRefusal(offer: Offer, bidUsdPerHour: string): string | null {
  const bid = bidUnitsOf(bidUsdPerHour);
  if (bid === null) return `bid "${bidUsdPerHour}" is not a decimal USD amount`;
  const spot = offer.spotPriceUsdPerHour ? parsePriceUnits(offer.spotPriceUsdPerHour) : null;
  if (spot === null) return `offer ${offer.id} has no spot market`;
  if (bid < spot) return `bid ${bidUsdPerHour} is under the spot price ${offer.spotPriceUsdPerHour} of offer ${offer.id}`;
  return null;
}

/** An offer as it stands: the generated one with its new price, its spot price now and what is left of its availability. */
function view(base: Offer, state: OfferState | null | undefined, spotUnits: number | null): Offer {
  return {
    ...base,
    priceUsdPerHour: state?.priceUsdPerHour ?? base.priceUsdPerHour,
    spotPriceUsdPerHour: spotUnits === null ? null : formatPriceUnits(spotUnits),
    available: Math.max(0, base.available - (state?.taken ?? 0)),
    attributes: { ...base.attributes },
  };
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
