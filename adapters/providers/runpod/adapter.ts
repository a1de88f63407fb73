/**
 * RunPod behind our Provider port. Offers come from the REST v2 catalog (per-GPU prices, VRAM,
 * largest count per cloud) joined with GraphQL for what v2 lacks (machine size and stock per
 * count); pods live on REST v2. Our instance id is the pod's `name` and its CP_INSTANCE_ID env var.
 */
import type { Offer } from '../../../core/market/offer.ts';
import type { StandardFilter } from '../../../core/market/search-filter.ts';
import {
  ProviderFailure,
  type CreateMachineRequest,
  type Machine,
  type MachineOption,
  type Provider,
  type ProviderFailureKind,
  type Rebootable,
  type SpotMachineRequest,
  type SpotMarket,
  type UpstreamVolume,
  type VolumeHost,
  type VolumeOffer,
} from '../../../core/ports/providers.ts';
import { isVolumeId } from '../../../core/volumes/volume.ts';
import { optionValuesProblem, unsupportedOptions } from '../shared/machine-options.ts';
import { divideDecimalDown, isPlainDecimal } from '../shared/decimal.ts';
import { RunpodGraphqlError, RunpodHttpError, type RunpodClient } from './client.ts';
import {
  CLOUDS,
  createPodBody,
  DataCenterListWire,
  NetworkVolumeListWire,
  NetworkVolumeWire,
  registryNameFor,
  RegistryWire,
  EXTRA_FILTER_KEYS,
  GpuTypeWire,
  labelOf,
  maxCountIn,
  ONE_SPEC_QUERY,
  oneSpecVariables,
  parseGpuTypes,
  parseOfferId,
  parseSpecs,
  parseSpotPrices,
  PodListWire,
  PodWire,
  PROVIDER_NAME,
  RENT_SPOT_MUTATION,
  specFor,
  spotPodInput,
  SpotPodWire,
  specsQuery,
  priceText,
  toMachine,
  toOffer,
  type Cloud,
  type CreatePodInput,
} from './mapping.ts';

export interface RunpodSettings {
  /** Used when a create names no image. */
  defaultImage: string;
  /** Container disk requested for every pod, and reported as the offers' disk. */
  diskGb: number;
  /** What a network volume costs, exact decimal USD per GB-month (RunPod lists $0.07 under 1 TB). */
  volumePriceUsdPerGbMonth: string;
}

const statusOf = (error: unknown): number | null => (error instanceof RunpodHttpError ? error.status : null);

function explain(what: string, error: unknown): string {
  if (error instanceof RunpodHttpError && error.status === 401) {
    return `${what}: RunPod did not accept the API key (HTTP 401: ${error.detail})`;
  }
  if (error instanceof RunpodHttpError && error.status === 403) {
    return `${what}: the API key has no access to this (HTTP 403: ${error.detail})`;
  }
  return `${what}: ${error instanceof Error ? error.message : String(error)}`;
}

const fail = (kind: ProviderFailureKind, what: string, error: unknown): ProviderFailure =>
  error instanceof ProviderFailure ? error : new ProviderFailure(PROVIDER_NAME, kind, explain(what, error), statusOf(error));

const isNotFound = (error: unknown): boolean => statusOf(error) === 404;

/**
 * A 4xx is RunPod saying no, and so are GraphQL errors (an HTTP 200 whose mutation did not run); anything else
 * leaves the outcome unknown or the provider unreachable.
 */
const refusalOr = (otherwise: ProviderFailureKind) => (error: unknown): ProviderFailureKind => {
  if (error instanceof RunpodGraphqlError) return 'rejected';
  const status = statusOf(error);
  return status !== null && status >= 400 && status < 500 ? 'rejected' : otherwise;
};

const podPath = (machineId: string): string => `/v2/pods/${encodeURIComponent(machineId)}`;
const volumePath = (volumeId: string): string => `/v2/network-volumes/${encodeURIComponent(volumeId)}`;
const registryPath = (registryId: string): string => `/v2/registries/${encodeURIComponent(registryId)}`;

const toVolume = (volume: NetworkVolumeWire): UpstreamVolume => ({
  volumeId: volume.id,
  label: volume.name ?? null,
  region: volume.dataCenter,
  sizeGb: volume.size,
  // RunPod states neither progress nor attachment: a volume it answers for is there to use
  status: 'available',
});

/** Decimals a bid per GPU is sent with: rounded down, so the whole machine never costs more than the bid. */
const BID_DECIMALS = 8;

/**
 * Also a SpotMarket: spot prices per GPU from GraphQL's gpuTypes (secureSpotPrice, communitySpotPrice), spot pods
 * by GraphQL podRentInterruptable at a bid per GPU, read back on v2 like any pod; an interrupted one is stopped
 * (EXITED) and, marked ours as spot by SPOT_BID_ENV, reads preempted.
 */
export class RunpodProvider implements Provider, Rebootable, VolumeHost, SpotMarket {
  readonly name = PROVIDER_NAME;
  /** No `startup_script`: RunPod runs no script of ours at boot, only the container's command. */
  readonly machineOptions: readonly MachineOption[] = ['custom_image', 'registry_auth', 'command', 'env', 'ports', 'ssh_keys', 'volumes'];
  readonly extraFilterKeys: readonly string[] = EXTRA_FILTER_KEYS;
  /** RunPod places a pod anywhere in its cloud and states no network figures. */
  readonly unfilterable: readonly StandardFilter[] = ['min_download_mbps', 'min_ports', 'country', 'region'];
  readonly #client: RunpodClient;
  readonly #settings: RunpodSettings;

  constructor(client: RunpodClient, settings: RunpodSettings) {
    this.#client = client;
    this.#settings = settings;
  }

  async listOffers(signal?: AbortSignal): Promise<Offer[]> {
    const what = 'list offers';
    try {
      const gpus = parseGpuTypes(await this.#client.rest('GET', '/v2/catalog/gpus', { retry: 'safe', ...(signal ? { signal } : {}) }));
      const counts = new Map<Cloud, number>(CLOUDS.map((cloud) => [cloud, Math.max(0, ...gpus.map((g) => maxCountIn(g, cloud)))]));
      if (![...counts.values()].some((max) => max > 0)) return [];
      const data = await this.#client.graphql(specsQuery(counts), {}, signal);
      const specs = parseSpecs(data);
      const spot = parseSpotPrices(data);

      const offers: Offer[] = [];
      for (const gpu of gpus) {
        for (const cloud of CLOUDS) {
          for (let count = 1; count <= maxCountIn(gpu, cloud); count += 1) {
            const key = { cloud, count, gpuTypeId: gpu.id };
            const offer = toOffer(gpu, key, specFor(specs, key), this.#settings.diskGb, spot.get(gpu.id)?.[cloud] ?? null);
            if (offer) offers.push(offer);
          }
        }
      }
      return offers;
    } catch (error) {
      throw fail('unavailable', what, error);
    }
  }

  isOfferId(offerId: string): boolean {
    return parseOfferId(offerId) !== null;
  }

  async getOffer(offerId: string, signal?: AbortSignal): Promise<Offer | null> {
    const key = parseOfferId(offerId);
    if (!key) return null;
    const what = `check offer ${offerId}`;
    const callSignal = signal ? { signal } : {};
    try {
      let body: unknown;
      try {
        body = await this.#client.rest('GET', `/v2/catalog/gpus/${encodeURIComponent(key.gpuTypeId)}`, { retry: 'safe', ...callSignal });
      } catch (error) {
        if (isNotFound(error)) return null;
        throw error;
      }
      const gpu = GpuTypeWire.parse(body);
      if (key.count > maxCountIn(gpu, key.cloud)) return null;
      const data = await this.#client.graphql(ONE_SPEC_QUERY, oneSpecVariables(key), signal);
      const spot = parseSpotPrices(data).get(gpu.id)?.[key.cloud] ?? null;
      return toOffer(gpu, key, specFor(parseSpecs(data), key, 'lowestPrice'), this.#settings.diskGb, spot);
    } catch (error) {
      throw fail('unavailable', what, error);
    }
  }

  createMachine(request: CreateMachineRequest): Promise<Machine> {
    return this.#create(request, `create a pod for ${request.label}`, async (input) => {
      // No idempotency key upstream: only a 429 is retried; a lost answer is left to the reconciler.
      const pod = PodWire.safeParse(await this.#client.rest('POST', '/v2/pods', { body: createPodBody(input), retry: 'once' }));
      if (!pod.success) return null;
      return toMachine(pod.data);
    });
  }

  /**
   * A spot pod at the bid: RunPod bids per GPU, so ours is divided by the count, rounded down. RunPod refuses a bid
   * under its minimum with a GraphQL error (rejected); the pod is read back on v2 afterwards like any other.
   */
  async createSpotMachine(request: SpotMachineRequest): Promise<Machine> {
    const what = `create a spot pod for ${request.label} at ${request.bidUsdPerHour}`;
    if (!isPlainDecimal(request.bidUsdPerHour)) throw new ProviderFailure(PROVIDER_NAME, 'rejected', `${what}: the bid is not a decimal USD amount`);
    return this.#create(request, what, async (input) => {
      const bidPerGpu = divideDecimalDown(request.bidUsdPerHour, input.key.count, BID_DECIMALS);
      const data = SpotPodWire.safeParse(await this.#client.graphql(RENT_SPOT_MUTATION, { input: spotPodInput(input, bidPerGpu) }, undefined, 'once'));
      if (!data.success) return null;
      const pod = data.data.podRentInterruptable;
      // no pod and no error: nothing was made
      if (!pod) throw new ProviderFailure(PROVIDER_NAME, 'rejected', `${what}: RunPod made no pod`);
      return { machineId: pod.id, label: input.label, status: 'provisioning', sshHost: null, sshPort: null, priceUsdPerHour: priceText(pod.costPerHr) };
    });
  }

  /** The checks and side work of every create; `send` makes the pod, answering null when the answer cannot be read. */
  async #create(request: CreateMachineRequest, what: string, send: (input: CreatePodInput) => Promise<Machine | null>): Promise<Machine> {
    const key = parseOfferId(request.offerId);
    if (!key) throw new ProviderFailure(PROVIDER_NAME, 'rejected', `create: "${request.offerId}" is not a RunPod offer id`);
    const refuse = (reason: string) => new ProviderFailure(PROVIDER_NAME, 'rejected', `${what}: ${reason}`);
    const unsupported = unsupportedOptions(request, this.machineOptions);
    if (unsupported.length > 0) throw refuse(`RunPod cannot carry out ${unsupported.join(', ')}`);
    const problem = optionValuesProblem(request);
    if (problem) throw refuse(problem);
    if (request.volumeIds.length > 1) throw refuse('RunPod attaches one network volume per pod');
    if (request.volumeIds.length > 0 && key.cloud !== 'SECURE') throw refuse('RunPod attaches network volumes to Secure Cloud pods only');

    const volume = request.volumeIds[0] === undefined ? null : await this.#volumeToAttach(request.volumeIds[0], what);
    const registryId = request.registryAuth ? await this.#createRegistry(request.label, request.registryAuth, what) : null;
    const input: CreatePodInput = {
      key,
      label: request.label,
      image: request.image ?? this.#settings.defaultImage,
      diskGb: this.#settings.diskGb,
      sshPublicKeys: request.sshPublicKeys,
      env: request.env,
      ports: request.ports,
      command: request.command,
      registryId,
      volume,
    };
    let machine: Machine | null;
    try {
      machine = await send(input);
    } catch (error) {
      const failure = fail(refusalOr('ambiguous')(error), what, error);
      // only a definite refusal frees the credential; after a lost answer a pod may be pulling with it
      if (failure.kind === 'rejected' && registryId) await this.#deleteRegistry(registryId);
      throw failure;
    }
    if (!machine) throw new ProviderFailure(PROVIDER_NAME, 'ambiguous', `${what}: the answer to a create was unreadable`);
    return machine;
  }

  /** The volume's data center, where the pod must be placed; a volume RunPod does not know is a refusal. */
  async #volumeToAttach(volumeId: string, what: string): Promise<{ volumeId: string; dataCenter: string }> {
    const volume = await this.getVolume(volumeId).catch((error: unknown) => {
      throw fail('unavailable', `${what}: read network volume ${volumeId}`, error);
    });
    if (!volume) throw new ProviderFailure(PROVIDER_NAME, 'rejected', `${what}: no network volume ${volumeId}`);
    return { volumeId, dataCenter: volume.region };
  }

  /**
   * RunPod pulls a private image only with a stored credential: one is made per pod ("cp-<our id>") and removed
   * when the pod is terminated, so no secret is shared between tenants or left behind.
   */
  async #createRegistry(label: string, auth: { username: string; password: string }, what: string): Promise<string> {
    try {
      const body = { name: registryNameFor(label), username: auth.username, password: auth.password };
      return RegistryWire.parse(await this.#client.rest('POST', '/v2/registries', { body, retry: 'once' })).id;
    } catch (error) {
      throw fail(refusalOr('unavailable')(error), `${what}: store the registry credential`, error);
    }
  }

  async #deleteRegistry(registryId: string): Promise<void> {
    await this.#client.rest('DELETE', registryPath(registryId), { retry: 'safe' }).catch(() => undefined);
  }

  async getMachine(machineId: string): Promise<Machine | null> {
    try {
      return toMachine(PodWire.parse(await this.#client.rest('GET', podPath(machineId), { retry: 'safe' })));
    } catch (error) {
      if (isNotFound(error)) return null;
      throw fail('unavailable', `read pod ${machineId}`, error);
    }
  }

  async listMachines(): Promise<Machine[]> {
    try {
      // A pod that cannot be read fails the whole list: dropping it could make one of ours look gone.
      const { pods } = PodListWire.parse(await this.#client.rest('GET', '/v2/pods', { retry: 'safe' }));
      return pods.filter((pod) => labelOf(pod) !== null).map(toMachine);
    } catch (error) {
      throw fail('unavailable', 'list pods', error);
    }
  }

  async terminateMachine(machineId: string): Promise<void> {
    // the pod names the registry credential made for it; a failed read must not stop the termination
    const registryId = await this.#client
      .rest('GET', podPath(machineId), { retry: 'safe' })
      .then((body) => PodWire.safeParse(body).data?.registry ?? null, () => null);
    try {
      await this.#client.rest('DELETE', podPath(machineId), { retry: 'safe' });
    } catch (error) {
      if (isNotFound(error)) return;
      throw fail(refusalOr('unavailable')(error), `terminate pod ${machineId}`, error);
    }
    if (registryId) await this.#deleteRegistry(registryId);
  }

  async volumeOffers(): Promise<VolumeOffer[]> {
    try {
      const { dataCenters } = DataCenterListWire.parse(await this.#client.rest('GET', '/v2/catalog/datacenters', { retry: 'safe' }));
      return dataCenters
        .filter((dc) => (dc.networkVolumeTypes ?? []).length > 0)
        .map((dc) => ({ region: dc.id, priceUsdPerGbMonth: this.#settings.volumePriceUsdPerGbMonth }));
    } catch (error) {
      throw fail('unavailable', 'list data centers', error);
    }
  }

  /** The volume's `name` is our label, as a pod's is: RunPod keeps nothing else we could find it by. */
  async createVolume(request: { label: string; name: string; sizeGb: number; region: string }): Promise<UpstreamVolume> {
    const what = `create network volume ${request.label}`;
    try {
      const body = { name: request.label, size: request.sizeGb, dataCenter: request.region };
      return toVolume(NetworkVolumeWire.parse(await this.#client.rest('POST', '/v2/network-volumes', { body, retry: 'once' })));
    } catch (error) {
      throw fail(refusalOr('ambiguous')(error), what, error);
    }
  }

  async getVolume(volumeId: string): Promise<UpstreamVolume | null> {
    try {
      return toVolume(NetworkVolumeWire.parse(await this.#client.rest('GET', volumePath(volumeId), { retry: 'safe' })));
    } catch (error) {
      if (isNotFound(error)) return null;
      throw fail('unavailable', `read network volume ${volumeId}`, error);
    }
  }

  /** GET /v2/network-volumes answers every volume of the account ({networkVolumes}); ours are named by our label. */
  async listVolumes(): Promise<UpstreamVolume[]> {
    try {
      const { networkVolumes } = NetworkVolumeListWire.parse(await this.#client.rest('GET', '/v2/network-volumes', { retry: 'safe' }));
      return networkVolumes.map(toVolume).filter((volume) => isVolumeId(volume.label));
    } catch (error) {
      throw fail('unavailable', 'list network volumes', error);
    }
  }

  /** RunPod refuses (4xx) while a pod still has the volume: that stays a refusal. */
  async deleteVolume(volumeId: string): Promise<void> {
    try {
      await this.#client.rest('DELETE', volumePath(volumeId), { retry: 'safe' });
    } catch (error) {
      if (isNotFound(error)) return;
      throw fail(refusalOr('unavailable')(error), `delete network volume ${volumeId}`, error);
    }
  }

  async rebootMachine(machineId: string): Promise<void> {
    try {
      await this.#client.rest('POST', `${podPath(machineId)}/action`, { body: { action: 'restart' }, retry: 'once' });
    } catch (error) {
      throw fail(refusalOr('unavailable')(error), `restart pod ${machineId}`, error);
    }
  }
}
