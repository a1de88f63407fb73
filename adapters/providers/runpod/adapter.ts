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
} from '../../../core/ports/providers.ts';
import { RunpodHttpError, type RunpodClient } from './client.ts';
import {
  CLOUDS,
  createPodBody,
  EXTRA_FILTER_KEYS,
  GpuTypeWire,
  labelOf,
  maxCountIn,
  ONE_SPEC_QUERY,
  oneSpecVariables,
  parseGpuTypes,
  parseOfferId,
  parseSpecs,
  PodListWire,
  PodWire,
  PROVIDER_NAME,
  specFor,
  specsQuery,
  toMachine,
  toOffer,
  type Cloud,
} from './mapping.ts';

export interface RunpodSettings {
  /** Used when a create names no image. */
  defaultImage: string;
  /** Container disk requested for every pod, and reported as the offers' disk. */
  diskGb: number;
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

/** A 4xx is RunPod saying no; anything else leaves the outcome unknown or the provider unreachable. */
const refusalOr = (otherwise: ProviderFailureKind) => (error: unknown): ProviderFailureKind => {
  const status = statusOf(error);
  return status !== null && status >= 400 && status < 500 ? 'rejected' : otherwise;
};

const podPath = (machineId: string): string => `/v2/pods/${encodeURIComponent(machineId)}`;

export class RunpodProvider implements Provider, Rebootable {
  readonly name = PROVIDER_NAME;
  readonly machineOptions: readonly MachineOption[] = ['custom_image', 'ssh_keys'];
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
      const specs = parseSpecs(await this.#client.graphql(specsQuery(counts), {}, signal));

      const offers: Offer[] = [];
      for (const gpu of gpus) {
        for (const cloud of CLOUDS) {
          for (let count = 1; count <= maxCountIn(gpu, cloud); count += 1) {
            const key = { cloud, count, gpuTypeId: gpu.id };
            const offer = toOffer(gpu, key, specFor(specs, key), this.#settings.diskGb);
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
      const specs = parseSpecs(await this.#client.graphql(ONE_SPEC_QUERY, oneSpecVariables(key), signal));
      return toOffer(gpu, key, specFor(specs, key, 'lowestPrice'), this.#settings.diskGb);
    } catch (error) {
      throw fail('unavailable', what, error);
    }
  }

  async createMachine(request: CreateMachineRequest): Promise<Machine> {
    const key = parseOfferId(request.offerId);
    if (!key) throw new ProviderFailure(PROVIDER_NAME, 'rejected', `create: "${request.offerId}" is not a RunPod offer id`);
    const what = `create a pod for ${request.label}`;
    const body = createPodBody({
      key,
      label: request.label,
      image: request.image ?? this.#settings.defaultImage,
      diskGb: this.#settings.diskGb,
      sshPublicKey: request.sshPublicKeys[0] ?? null,
    });
    let answer: unknown;
    try {
      // No idempotency key upstream: only a 429 is retried; a lost answer is left to the reconciler.
      answer = await this.#client.rest('POST', '/v2/pods', { body, retry: 'once' });
    } catch (error) {
      throw fail(refusalOr('ambiguous')(error), what, error);
    }
    const pod = PodWire.safeParse(answer);
    if (!pod.success) throw new ProviderFailure(PROVIDER_NAME, 'ambiguous', `${what}: the answer to a create was unreadable`);
    return toMachine(pod.data);
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
    try {
      await this.#client.rest('DELETE', podPath(machineId), { retry: 'safe' });
    } catch (error) {
      if (isNotFound(error)) return;
      throw fail(refusalOr('unavailable')(error), `terminate pod ${machineId}`, error);
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
