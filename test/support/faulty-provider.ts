import type { Offer } from '../../core/market/offer.ts';
import {
  isSpotMarket,
  isVolumeHost,
  ProviderFailure,
  type CreateMachineRequest,
  type Machine,
  type MachineOption,
  type Provider,
  type Rebootable,
  type SpotMarket,
  type VolumeHost,
} from '../../core/ports/providers.ts';

/** What the next create does instead of answering: `ambiguous` makes the machine and loses the answer; `lost` makes nothing and never answers. */
export type CreateFault = 'ambiguous' | 'lost' | 'rejected';
/** What the next termination does: `fails` answers an error and removes nothing; `lies` answers success and removes nothing. */
export type TerminateFault = 'fails' | 'lies';

/**
 * A provider that misbehaves the ways real clouds do, on demand, around a working one: creates whose
 * answer is lost (with or without a machine made), terminations that fail or say they worked when they did
 * not, reads that fail (an outage), and a gate that holds the next machine listing until the test opens it.
 * Volumes are passed through, and only when the inner provider hosts them (so isVolumeHost sees the same), their creates
 * meeting faults of their own (failNextVolumeCreates) and their reads the outage;
 * so is a spot market, whose creates meet the same create faults and gate as createMachine.
 */
export class FaultyProvider implements Provider, Rebootable {
  readonly inner: Provider & Partial<Rebootable>;
  private readonly createFaults: CreateFault[] = [];
  private readonly terminateFaults: TerminateFault[] = [];
  private readonly volumeCreateFaults: CreateFault[] = [];
  private outage = false;
  private machineReadFailures = 0;
  private listingGate: { where: 'before-read' | 'after-read'; reached: () => void; open: Promise<void> } | null = null;
  private createGate: { reached: () => void; open: Promise<void> } | null = null;
  private volumeCreateGate: { reached: () => void; open: Promise<void> } | null = null;
  private hangingCreates = 0;
  private createBarrier: { count: number; waiting: (() => void)[] } | null = null;
  private createAnswers: (() => void)[] = [];
  private terminationsNow = 0;
  /** Calls the provider answered (or failed), for tests that count them. */
  readonly calls = { create: 0, terminate: 0, list: 0, listVolumes: 0, deleteVolume: 0 };
  /** Real time each create (machine or spot) takes before the provider answers: a slow cloud. A function draws it per create. */
  createLatencyMs: number | (() => number) = 0;
  /** Real time each termination takes. */
  terminateLatencyMs = 0;
  /** The most terminations that were in flight at once. */
  terminationsAtOnce = 0;

  constructor(inner: Provider & Partial<Rebootable>) {
    this.inner = inner;
    if (isVolumeHost(inner)) {
      const volumes: VolumeHost = {
        volumeOffers: () => inner.volumeOffers(),
        createVolume: async (request) => {
          const gate = this.volumeCreateGate;
          this.volumeCreateGate = null;
          if (gate) {
            gate.reached();
            await gate.open;
          }
          const fault = this.volumeCreateFaults.shift();
          if (fault === 'lost') throw new ProviderFailure(this.name, 'ambiguous', `create volume ${request.label} timed out; nothing was made`);
          if (fault === 'rejected') throw new ProviderFailure(this.name, 'rejected', `create volume ${request.label}: quota exceeded`);
          const volume = await inner.createVolume(request);
          if (fault === 'ambiguous') throw new ProviderFailure(this.name, 'ambiguous', `create volume timed out after making ${volume.volumeId}`);
          return volume;
        },
        getVolume: (volumeId) => {
          this.checkReachable(`get volume ${volumeId}`);
          return inner.getVolume(volumeId);
        },
        listVolumes: () => {
          this.calls.listVolumes++;
          this.checkReachable('list volumes');
          return inner.listVolumes();
        },
        deleteVolume: (volumeId) => {
          this.calls.deleteVolume++;
          return inner.deleteVolume(volumeId);
        },
      };
      Object.assign(this, volumes);
    }
    if (isSpotMarket(inner)) {
      const spot: SpotMarket = { createSpotMachine: (request) => this.create(() => inner.createSpotMachine(request)) };
      Object.assign(this, spot);
    }
  }

  get name(): string {
    return this.inner.name;
  }

  /** What the provider says it carries out: the inner provider's, unless a test narrowed it (a Lambda-like cloud). */
  narrowedOptions: readonly MachineOption[] | null = null;

  get machineOptions(): readonly MachineOption[] {
    return this.narrowedOptions ?? this.inner.machineOptions;
  }

  get extraFilterKeys(): readonly string[] {
    return this.inner.extraFilterKeys;
  }

  // ---- knobs ------------------------------------------------------------------------------------

  failNextCreates(count: number, fault: CreateFault): void {
    for (let i = 0; i < count; i++) this.createFaults.push(fault);
  }

  /** The next `count` volume creates meet `fault` (as machine creates do); only for a volume host. */
  failNextVolumeCreates(count: number, fault: CreateFault): void {
    for (let i = 0; i < count; i++) this.volumeCreateFaults.push(fault);
  }

  failNextTerminations(count: number, fault: TerminateFault): void {
    for (let i = 0; i < count; i++) this.terminateFaults.push(fault);
  }

  /** The next `count` creates (machine or spot) never answer, and make nothing: a cloud that hangs. */
  /** Holds the next `count` creates until all of them have reached the provider, then lets them on together. */
  barrierNextCreates(count: number): void {
    this.createBarrier = { count, waiting: [] };
  }

  hangNextCreates(count: number): void {
    this.hangingCreates += count;
  }

  /** The next `count` reads of one machine (getMachine) fail as a transient error would. */
  failNextMachineReads(count: number): void {
    this.machineReadFailures += count;
  }

  /** While on, every read (offers, machines) fails as if the provider could not be reached. */
  setOutage(on: boolean): void {
    this.outage = on;
  }

  /** Holds the next create before it reaches the provider, until `open` is called (a slow upstream). */
  holdNextCreate(): { reached: Promise<void>; open: () => void } {
    const { reached, open, gate } = makeGate();
    this.createGate = gate;
    return { reached, open };
  }

  /** Resolves once the next create (machine or spot) that reaches the provider has its answer, made or refused. */
  nextCreateAnswered(): Promise<void> {
    return new Promise((resolve) => this.createAnswers.push(resolve));
  }

  /** Holds the next volume create before it reaches the provider, until `open` is called (an answer that takes very long). */
  holdNextVolumeCreate(): { reached: Promise<void>; open: () => void } {
    const { reached, open, gate } = makeGate();
    this.volumeCreateGate = gate;
    return { reached, open };
  }

  /**
   * Holds the next machine listing, before it reads the provider or after (answering what it read then).
   * `reached` resolves once a listing waits; the listing goes on when `open` is called.
   */
  holdNextListing(where: 'before-read' | 'after-read'): { reached: Promise<void>; open: () => void } {
    const { reached, open, gate } = makeGate();
    this.listingGate = { where, ...gate };
    return { reached, open };
  }

  // ---- the Provider port ------------------------------------------------------------------------

  async listOffers(signal?: AbortSignal): Promise<Offer[]> {
    this.checkReachable('list offers');
    return this.inner.listOffers(signal);
  }

  isOfferId(offerId: string): boolean {
    return this.inner.isOfferId(offerId);
  }

  async getOffer(offerId: string, signal?: AbortSignal): Promise<Offer | null> {
    this.checkReachable(`get offer ${offerId}`);
    return this.inner.getOffer(offerId, signal);
  }

  createMachine(request: CreateMachineRequest): Promise<Machine> {
    return this.create(() => this.inner.createMachine(request));
  }

  private async create(make: () => Promise<Machine>): Promise<Machine> {
    const gate = this.createGate;
    this.createGate = null;
    if (gate) {
      gate.reached();
      await gate.open;
    }
    const barrier = this.createBarrier;
    if (barrier) {
      await new Promise<void>((resolve) => {
        barrier.waiting.push(resolve);
        if (barrier.waiting.length < barrier.count) return;
        this.createBarrier = null;
        for (const go of barrier.waiting) go();
      });
    }
    if (this.hangingCreates > 0) {
      this.hangingCreates--;
      return new Promise<Machine>(() => undefined);
    }
    const latency = typeof this.createLatencyMs === 'function' ? this.createLatencyMs() : this.createLatencyMs;
    if (latency > 0) await sleep(latency);
    this.calls.create++;
    const fault = this.createFaults.shift();
    if (fault === 'lost') throw new ProviderFailure(this.name, 'ambiguous', 'create timed out; nothing was made');
    if (fault === 'rejected') throw new ProviderFailure(this.name, 'rejected', 'no capacity on this host');
    const machine = await make().finally(() => this.createAnswers.shift()?.());
    if (fault === 'ambiguous') throw new ProviderFailure(this.name, 'ambiguous', `create timed out after making ${machine.machineId}`);
    return machine;
  }

  async getMachine(machineId: string): Promise<Machine | null> {
    this.checkReachable(`get machine ${machineId}`);
    if (this.machineReadFailures > 0) {
      this.machineReadFailures--;
      throw new ProviderFailure(this.name, 'unavailable', `get machine ${machineId}: 502 from upstream`);
    }
    return this.inner.getMachine(machineId);
  }

  async listMachines(): Promise<Machine[]> {
    const gate = this.listingGate;
    this.listingGate = null;
    const wait = async () => {
      gate!.reached();
      await gate!.open;
    };
    if (gate?.where === 'before-read') await wait();
    this.calls.list++;
    this.checkReachable('list machines');
    const machines = await this.inner.listMachines();
    if (gate?.where === 'after-read') await wait();
    return machines;
  }

  async terminateMachine(machineId: string): Promise<void> {
    this.calls.terminate++;
    this.terminationsNow++;
    this.terminationsAtOnce = Math.max(this.terminationsAtOnce, this.terminationsNow);
    try {
      if (this.terminateLatencyMs > 0) await sleep(this.terminateLatencyMs);
      const fault = this.terminateFaults.shift();
      if (fault === 'fails') throw new ProviderFailure(this.name, 'unavailable', `terminate ${machineId}: 503 from upstream`);
      if (fault === 'lies') return;
      await this.inner.terminateMachine(machineId);
    } finally {
      this.terminationsNow--;
    }
  }

  async rebootMachine(machineId: string): Promise<void> {
    if (!this.inner.rebootMachine) throw new ProviderFailure(this.name, 'rejected', 'reboot is not supported');
    await this.inner.rebootMachine(machineId);
  }

  private checkReachable(operation: string): void {
    if (this.outage) throw new ProviderFailure(this.name, 'unavailable', `${operation}: the provider cannot be reached`);
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A gate a test opens: `reached` resolves when something waits at it, `open` lets it through. */
function makeGate() {
  let reached!: () => void;
  let open!: () => void;
  const reachedPromise = new Promise<void>((resolve) => (reached = resolve));
  const openPromise = new Promise<void>((resolve) => (open = resolve));
  return { reached: reachedPromise, open, gate: { reached, open: openPromise } };
}
