import { setTimeout as delay } from 'node:timers/promises';
import type { Offer } from '../../../core/market/offer.ts';
import type { StandardFilter } from '../../../core/market/search-filter.ts';
import {
  ProviderFailure,
  type CreateMachineRequest,
  type Machine,
  type MachineOption,
  type Provider,
  type Rebootable,
  type UpstreamVolume,
  type VolumeHost,
  type VolumeOffer,
} from '../../../core/ports/providers.ts';
import { optionValuesProblem, unsupportedOptions } from '../shared/machine-options.ts';
import { upstreamFailure, type FailureReading, type Operation } from '../shared/upstream-failure.ts';
import { HyperstackApiError, type HyperstackClient } from './client.ts';
import {
  countryOf,
  createBody,
  createdSchema,
  decimalOf,
  environmentListSchema,
  environmentNameFor,
  EXTRA_FILTER_KEYS,
  flavorListSchema,
  flavorSchema,
  instanceListSchema,
  isCreating,
  keyMaterial,
  KEYPAIR_PREFIX,
  keypairListSchema,
  labelOf,
  launchedMachine,
  oneInstanceSchema,
  oneVolumeSchema,
  parseOfferId,
  pricebookSchema,
  PROVIDER,
  regionListSchema,
  toMachine,
  toOffers,
  toVolume,
  volumeListSchema,
  type HyperstackFlavor,
  type HyperstackInstance,
  type HyperstackVolume,
} from './mapping.ts';

const FAILURES: FailureReading<HyperstackApiError> = {
  provider: PROVIDER,
  apiError: HyperstackApiError,
  describe: (error) => (error.status === 401 ? 'API key refused: check HYPERSTACK_API_KEY' : `HTTP ${error.status}: ${error.message}${error.reason ? ` (${error.reason})` : ''}`),
};

export const toFailure = (operation: Operation, what: string, error: unknown): ProviderFailure => upstreamFailure(FAILURES, operation, what, error);

const isGone = (error: unknown): boolean => error instanceof HyperstackApiError && error.status === 404;

const PAGE = 100;

export interface HyperstackAdapterOptions {
  /** The OS image machines boot (an image name of GET /core/images). */
  image: string;
  /** The volume type volumes are made as (GET /core/volume-types). */
  volumeType: string;
  /** What a volume costs, exact decimal USD per GB-month. */
  volumePriceUsdPerGbMonth: string;
  /** How long a terminate waits for a machine still being created (Hyperstack refuses to delete it then). */
  deleteWaitMs: number;
  /** How often it looks meanwhile. */
  deletePollMs: number;
}

/**
 * Hyperstack (NexGen Cloud) rents virtual machines in environments (one per region, made on first use): a create
 * carries one imported key pair (the other keys and a startup script through cloud-init), one volume by name, a
 * floating IP for SSH on port 22. Hard reboot. No container image, command, env or ports.
 */
export class HyperstackProvider implements Provider, Rebootable, VolumeHost {
  readonly name = PROVIDER;
  readonly machineOptions: readonly MachineOption[] = ['ssh_keys', 'startup_script', 'volumes'];
  readonly extraFilterKeys: readonly string[] = EXTRA_FILTER_KEYS;
  readonly unfilterable: readonly StandardFilter[] = ['min_download_mbps', 'min_ports'];
  private readonly client: HyperstackClient;
  private readonly options: HyperstackAdapterOptions;
  /** Environments known to exist (name → region): made once, never deleted. */
  private readonly environments = new Map<string, string>();

  constructor(client: HyperstackClient, options: HyperstackAdapterOptions) {
    this.client = client;
    this.options = options;
  }

  private async read(path: string, what: string, signal?: AbortSignal): Promise<unknown> {
    try {
      return await this.client.call('GET', path, { idempotent: true, signal });
    } catch (error) {
      throw toFailure('read', what, error);
    }
  }

  async listOffers(signal?: AbortSignal): Promise<Offer[]> {
    const [flavors, pricebook, regions] = await Promise.all([
      this.read('/core/flavors', 'list flavors', signal),
      this.read('/pricebook', 'read the pricebook', signal),
      this.read('/core/regions', 'list regions', signal),
    ]);
    try {
      const parsed: HyperstackFlavor[] = flavorListSchema.parse(flavors).data.flatMap((group) =>
        group.flavors.flatMap((raw) => {
          const flavor = flavorSchema.safeParse(raw);
          return flavor.success ? [{ ...flavor.data, region_name: flavor.data.region_name ?? group.region_name ?? null }] : [];
        }),
      );
      const prices = new Map(pricebookSchema.parse(pricebook).flatMap((item) => {
        const price = decimalOf(item.value);
        return price === null ? [] : [[item.name, price] as const];
      }));
      const countries = new Map(regionListSchema.parse(regions).regions.map((r) => [r.name, countryOf(r.country)]));
      return toOffers({ flavors: parsed, prices, countries });
    } catch (error) {
      throw toFailure('read', 'list offers', error);
    }
  }

  isOfferId(offerId: string): boolean {
    return parseOfferId(offerId) !== null;
  }

  async getOffer(offerId: string, signal?: AbortSignal): Promise<Offer | null> {
    if (!this.isOfferId(offerId)) return null;
    return (await this.listOffers(signal)).find((offer) => offer.id === `${PROVIDER}:${offerId}`) ?? null;
  }

  async createMachine(request: CreateMachineRequest): Promise<Machine> {
    const where = parseOfferId(request.offerId);
    if (!where) throw new ProviderFailure(PROVIDER, 'rejected', `no such offer: ${request.offerId}`);
    const unsupported = unsupportedOptions(request, this.machineOptions);
    if (unsupported.length > 0) throw new ProviderFailure(PROVIDER, 'rejected', `Hyperstack cannot carry out ${unsupported.join(', ')}`);
    const problem = optionValuesProblem(request);
    if (problem) throw new ProviderFailure(PROVIDER, 'rejected', problem);
    const [firstKey, ...extraKeys] = request.sshPublicKeys;
    if (firstKey === undefined) throw new ProviderFailure(PROVIDER, 'rejected', 'Hyperstack creates only with a key pair: give an SSH public key');
    if (request.volumeIds.length > 1) throw new ProviderFailure(PROVIDER, 'rejected', 'Hyperstack attaches one volume at create');
    const volumeName = request.volumeIds[0] ? await this.volumeNameFor(request.volumeIds[0], where.region) : null;
    await this.ensureEnvironment(where.region);
    const keyName = await this.keyPairFor(firstKey, where.region, request.label);

    let created: HyperstackInstance;
    try {
      const data = await this.client.call('POST', '/core/virtual-machines', {
        idempotent: false,
        body: createBody({ ...where, image: this.options.image, label: request.label, keyName, extraKeys, startupScript: request.startupScript, volumeName }),
      });
      created = createdSchema.parse(data).instances[0]!;
    } catch (error) {
      throw toFailure('create', 'create virtual machine', error);
    }
    // the create answers the machine itself; one without our label read back is still ours
    return labelOf(created) ? toMachine(created) : launchedMachine(String(created.id), request.label);
  }

  async getMachine(machineId: string): Promise<Machine | null> {
    const instance = await this.instance(machineId);
    return instance && toMachine(instance);
  }

  private async instance(machineId: string): Promise<HyperstackInstance | null> {
    if (!/^\d+$/.test(machineId)) return null;
    try {
      return oneInstanceSchema.parse(await this.client.call('GET', `/core/virtual-machines/${machineId}`, { idempotent: true })).instance;
    } catch (error) {
      if (isGone(error)) return null;
      throw toFailure('read', 'get virtual machine', error);
    }
  }

  async listMachines(): Promise<Machine[]> {
    const all: HyperstackInstance[] = [];
    try {
      for (let page = 1; ; page += 1) {
        const { instances } = instanceListSchema.parse(await this.client.call('GET', `/core/virtual-machines?page=${page}&pageSize=${PAGE}`, { idempotent: true }));
        all.push(...instances);
        if (instances.length < PAGE) break;
      }
    } catch (error) {
      throw toFailure('read', 'list virtual machines', error);
    }
    return all.filter((i) => labelOf(i) !== null).map(toMachine);
  }

  /**
   * Hyperstack refuses to delete a machine still being created: the delete waits for it to be up (deleteWaitMs), and
   * past that answers unavailable, so the caller tries again later rather than think it refused for good.
   */
  async terminateMachine(machineId: string): Promise<void> {
    const deadline = Date.now() + this.options.deleteWaitMs;
    for (;;) {
      const instance = await this.instance(machineId);
      if (!instance || ['DELETING', 'DELETED'].includes((instance.status ?? '').toUpperCase())) return;
      if (!isCreating(instance)) break;
      if (Date.now() >= deadline) throw new ProviderFailure(PROVIDER, 'unavailable', `delete ${machineId}: still being created; Hyperstack deletes it only once it is up`);
      await delay(this.options.deletePollMs);
    }
    try {
      await this.client.call('DELETE', `/core/virtual-machines/${machineId}`, { idempotent: true });
    } catch (error) {
      if (isGone(error)) return;
      if (error instanceof HyperstackApiError && (error.status === 409 || /creat/i.test(error.message))) {
        throw new ProviderFailure(PROVIDER, 'unavailable', `delete ${machineId}: ${error.message}`, error.status);
      }
      throw toFailure('action', 'delete virtual machine', error);
    }
  }

  async rebootMachine(machineId: string): Promise<void> {
    try {
      await this.client.call('GET', `/core/virtual-machines/${encodeURIComponent(machineId)}/hard-reboot`, { idempotent: false });
    } catch (error) {
      throw toFailure('action', 'hard reboot', error);
    }
  }

  // ---- environments and key pairs: both per region ----

  private async ensureEnvironment(region: string): Promise<string> {
    const name = environmentNameFor(region);
    if (this.environments.has(name)) return name;
    try {
      const { environments } = environmentListSchema.parse(await this.client.call('GET', `/core/environments?search=${encodeURIComponent(name)}`, { idempotent: true }));
      if (!environments.some((e) => e.name === name)) {
        await this.client.call('POST', '/core/environments', { idempotent: false, body: { name, region } });
      }
    } catch (error) {
      // made meanwhile by another process: a 409 says it exists
      if (!(error instanceof HyperstackApiError && error.status === 409)) throw toFailure('action', `make environment ${name}`, error);
    }
    this.environments.set(name, region);
    return name;
  }

  /** A key pair of the region's environment with the same material is reused; else the key is imported as "cp-<our id>". */
  private async keyPairFor(publicKey: string, region: string, label: string): Promise<string> {
    const environment = environmentNameFor(region);
    try {
      const { keypairs } = keypairListSchema.parse(await this.client.call('GET', `/core/keypairs?page=1&pageSize=${PAGE}`, { idempotent: true }));
      const same = keypairs.find((k) => k.environment?.name === environment && k.public_key && keyMaterial(k.public_key) === keyMaterial(publicKey));
      if (same) return same.name;
      const name = `${KEYPAIR_PREFIX}${label}`.slice(0, 50);
      await this.client.call('POST', '/core/keypairs', { idempotent: false, body: { environment_name: environment, name, public_key: publicKey.trim() } });
      return name;
    } catch (error) {
      throw toFailure('action', 'import key pair', error);
    }
  }

  // ---- volumes ----

  private regionOfEnvironment = (name: string): string | null => this.environments.get(name) ?? null;

  async volumeOffers(): Promise<VolumeOffer[]> {
    try {
      const { regions } = regionListSchema.parse(await this.client.call('GET', '/core/regions', { idempotent: true }));
      return regions.map((r) => ({ region: r.name, priceUsdPerGbMonth: this.options.volumePriceUsdPerGbMonth }));
    } catch (error) {
      throw toFailure('read', 'list regions', error);
    }
  }

  async createVolume(request: { label: string; name: string; sizeGb: number; region: string }): Promise<UpstreamVolume> {
    if (!(await this.volumeOffers()).some((o) => o.region === request.region)) {
      throw new ProviderFailure(PROVIDER, 'rejected', `create volume: Hyperstack has no region ${request.region}`);
    }
    const environment = await this.ensureEnvironment(request.region);
    try {
      const data = await this.client.call('POST', '/core/volumes', {
        idempotent: false,
        body: { name: request.label, environment_name: environment, size: request.sizeGb, volume_type: this.options.volumeType, description: request.name.slice(0, 200) },
      });
      return toVolume(oneVolumeSchema.parse(data).volume, this.regionOfEnvironment);
    } catch (error) {
      throw toFailure('create', 'create volume', error);
    }
  }

  private async volume(volumeId: string): Promise<HyperstackVolume | null> {
    if (!/^\d+$/.test(volumeId)) return null;
    try {
      return oneVolumeSchema.parse(await this.client.call('GET', `/core/volumes/${volumeId}`, { idempotent: true })).volume;
    } catch (error) {
      if (isGone(error)) return null;
      throw toFailure('read', 'get volume', error);
    }
  }

  async getVolume(volumeId: string): Promise<UpstreamVolume | null> {
    const volume = await this.volume(volumeId);
    return volume && toVolume(volume, this.regionOfEnvironment);
  }

  async listVolumes(): Promise<UpstreamVolume[]> {
    const all: HyperstackVolume[] = [];
    try {
      for (let page = 1; ; page += 1) {
        const { volumes } = volumeListSchema.parse(await this.client.call('GET', `/core/volumes?page=${page}&pageSize=${PAGE}`, { idempotent: true }));
        all.push(...volumes);
        if (volumes.length < PAGE) break;
      }
    } catch (error) {
      throw toFailure('read', 'list volumes', error);
    }
    return all.map((v) => toVolume(v, this.regionOfEnvironment)).filter((v) => v.label !== null);
  }

  /** Hyperstack refuses to delete a volume still attached: a refusal. */
  async deleteVolume(volumeId: string): Promise<void> {
    if (!/^\d+$/.test(volumeId)) return;
    try {
      await this.client.call('DELETE', `/core/volumes/${volumeId}`, { idempotent: true });
    } catch (error) {
      if (isGone(error)) return;
      throw toFailure('action', `delete volume ${volumeId}`, error);
    }
  }

  /** A create attaches a volume by name: ours is known by id, so it is looked up and its region checked first. */
  private async volumeNameFor(volumeId: string, region: string): Promise<string> {
    const volume = await this.volume(volumeId);
    if (!volume) throw new ProviderFailure(PROVIDER, 'rejected', `create: no volume ${volumeId}`);
    const where = toVolume(volume, this.regionOfEnvironment).region;
    if (where !== region) throw new ProviderFailure(PROVIDER, 'rejected', `create: volume ${volumeId} is in ${where}, the offer in ${region}`);
    return volume.name;
  }
}
