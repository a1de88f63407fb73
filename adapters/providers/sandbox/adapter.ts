import { setTimeout as sleep } from 'node:timers/promises';
import type { Offer } from '../../../core/market/offer.ts';
import {
  MACHINE_OPTIONS,
  ProviderFailure,
  type CreateMachineRequest,
  type Machine,
  type MachineOption,
  type Provider,
  type Rebootable,
  type SpotMachineRequest,
  type SpotMarket,
  type UpstreamVolume,
  type VolumeHost,
  type VolumeOffer,
} from '../../../core/ports/providers.ts';
import { EXTRA_FILTER_KEYS, offerIndexOf, PROVIDER_NAME } from './catalog.ts';
import { DEFAULT_IMAGE, VOLUME_REGIONS, type SandboxCloud, type SandboxMachine, type SandboxVolume } from './simulator.ts';
import { isInstanceId } from '../../../core/rentals/instance.ts';
import { isVolumeId } from '../../../core/volumes/volume.ts';


const toVolume = (volume: SandboxVolume): UpstreamVolume => ({
  volumeId: volume.volumeId,
  label: volume.label,
  region: volume.region,
  sizeGb: volume.sizeGb,
  status: volume.inUse ? 'in_use' : 'available',
});

const toMachine = (machine: SandboxMachine): Machine => ({
  machineId: machine.machineId,
  label: machine.label,
  status: machine.status,
  sshHost: machine.sshHost,
  sshPort: machine.sshPort,
  priceUsdPerHour: machine.priceUsdPerHour,
});

/**
 * The Provider port over the simulated cloud. It behaves like a remote adapter would: answers are
 * async, listings can be slow and abortable, and failures arrive as ProviderFailure.
 * `cloud` is public so tests, demos and the operator can turn the simulator's knobs.
 * It carries out every create option, hosts volumes in every region of its market, at one price per GB-month, and
 * has a simulated spot market (spot.ts): offers with one carry a moving spot price, and machines made at a bid are
 * preempted when it rises over the bid or at seeded random moments.
 */
export class SandboxProvider implements Provider, Rebootable, VolumeHost, SpotMarket {
  readonly name = PROVIDER_NAME;
  readonly machineOptions: readonly MachineOption[] = MACHINE_OPTIONS;
  readonly extraFilterKeys: readonly string[] = EXTRA_FILTER_KEYS;
  readonly cloud: SandboxCloud;
  readonly #volumePriceUsdPerGbMonth: string;

  constructor(cloud: SandboxCloud, volumePriceUsdPerGbMonth = '0.07') {
    this.cloud = cloud;
    this.#volumePriceUsdPerGbMonth = volumePriceUsdPerGbMonth;
  }

  async listOffers(signal?: AbortSignal): Promise<Offer[]> {
    await this.delay(signal);
    this.checkReachable('list offers', signal);
    return this.cloud.listOffers();
  }

  isOfferId(offerId: string): boolean {
    return offerIndexOf(offerId) !== null;
  }

  async getOffer(offerId: string, signal?: AbortSignal): Promise<Offer | null> {
    this.checkReachable(`get offer ${offerId}`, signal);
    return this.cloud.getOffer(offerId);
  }

  createMachine(request: CreateMachineRequest): Promise<Machine> {
    return this.create(request);
  }

  createSpotMachine(request: SpotMachineRequest): Promise<Machine> {
    return this.create(request, request.bidUsdPerHour);
  }

  private async create(request: CreateMachineRequest, spotBidUsdPerHour?: string): Promise<Machine> {
    const outcome = await this.cloud.create({
      ...(spotBidUsdPerHour !== undefined && { spotBidUsdPerHour }),
      offerId: request.offerId,
      label: request.label,
      name: request.name,
      image: request.image ?? DEFAULT_IMAGE,
      options: {
        sshPublicKeys: request.sshPublicKeys,
        registryAuth: request.registryAuth,
        command: request.command,
        env: request.env,
        ports: request.ports,
        startupScript: request.startupScript,
        volumeIds: request.volumeIds,
      },
    });
    switch (outcome.kind) {
      case 'created':
        return toMachine(outcome.machine);
      case 'rejected':
        throw new ProviderFailure(this.name, 'rejected', `create on offer ${request.offerId} rejected: ${outcome.reason}`);
      case 'ambiguous':
        throw new ProviderFailure(this.name, 'ambiguous', `create on offer ${request.offerId} has no answer: ${outcome.reason}`);
    }
  }

  async getMachine(machineId: string): Promise<Machine | null> {
    this.checkReachable(`get machine ${machineId}`);
    const machine = await this.cloud.getMachine(machineId);
    return machine ? toMachine(machine) : null;
  }

  async listMachines(): Promise<Machine[]> {
    this.checkReachable('list machines');
    return (await this.cloud.listMachines())
      .filter((machine) => isInstanceId(machine.label)) // others on the account are not ours
      .map(toMachine);
  }

  async terminateMachine(machineId: string): Promise<void> {
    await this.cloud.terminate(machineId);
  }

  async rebootMachine(machineId: string): Promise<void> {
    const result = await this.cloud.reboot(machineId);
    if (result === 'not_found') throw new ProviderFailure(this.name, 'rejected', `reboot: no live machine ${machineId}`);
    if (result === 'not_running') throw new ProviderFailure(this.name, 'rejected', `reboot: machine ${machineId} is not running`);
  }

  async volumeOffers(): Promise<VolumeOffer[]> {
    return VOLUME_REGIONS.map((region) => ({ region, priceUsdPerGbMonth: this.#volumePriceUsdPerGbMonth }));
  }

  async createVolume(request: { label: string; name: string; sizeGb: number; region: string }): Promise<UpstreamVolume> {
    const outcome = await this.cloud.createVolume(request);
    if ('rejected' in outcome) throw new ProviderFailure(this.name, 'rejected', `create volume ${request.label} rejected: ${outcome.rejected}`);
    return toVolume(outcome);
  }

  async getVolume(volumeId: string): Promise<UpstreamVolume | null> {
    this.checkReachable(`get volume ${volumeId}`);
    const volume = await this.cloud.getVolume(volumeId);
    return volume ? toVolume(volume) : null;
  }

  async listVolumes(): Promise<UpstreamVolume[]> {
    this.checkReachable('list volumes');
    return (await this.cloud.listVolumes())
      .filter((volume) => isVolumeId(volume.label)) // others on the account are not ours
      .map(toVolume);
  }

  async deleteVolume(volumeId: string): Promise<void> {
    if ((await this.cloud.deleteVolume(volumeId)) === 'in_use') {
      throw new ProviderFailure(this.name, 'rejected', `delete volume ${volumeId}: a machine not terminated has it attached`);
    }
  }

  /** The configured listing latency, cut short (as a failed read) when the caller gives up. */
  private async delay(signal?: AbortSignal): Promise<void> {
    if (this.cloud.latencyMs <= 0) return;
    try {
      await sleep(this.cloud.latencyMs, undefined, { signal });
    } catch (error) {
      throw new ProviderFailure(this.name, 'unavailable', `list offers aborted: ${String((error as Error).message ?? error)}`);
    }
  }

  private checkReachable(operation: string, signal?: AbortSignal): void {
    if (signal?.aborted) throw new ProviderFailure(this.name, 'unavailable', `${operation} aborted`);
    if (this.cloud.takeReadFailure()) throw new ProviderFailure(this.name, 'unavailable', `${operation}: simulated outage`);
  }
}
