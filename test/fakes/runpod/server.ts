/**
 * A local stand-in for RunPod: REST v2 (catalog, pods, pod actions) and the GraphQL endpoint for
 * what v2 lacks (gpuTypes with securePrice/communityPrice and lowestPrice size/stock per count).
 * It reproduces the documented shapes and quirks: RFC 9457 problem bodies, 422 for unknown body
 * properties, 400 for no capacity with only a human `detail`, RateLimit headers on every
 * authenticated REST answer and Retry-After on 429, GraphQL errors inside an HTTP 200, stock-less
 * lowestPrice with null size, cluster pods hidden from the pod list, 204 then 404 on delete.
 * Knobs let a test add latency, fail the next requests, hang a create, and read every request.
 * Spot pods: GraphQL `podRentInterruptable` at `bidPerGpu` (refused with a GraphQL error under the type's spot
 * price in that cloud, or where it has none); the pod then lives on v2 like any other, costing its bid, and is
 * interrupted (stopped: EXITED, cost 0, no runtime) when the spot price rises over its bid (setSpotPrice) or on
 * `interrupt`. v2 says nothing of bids: the fake keeps them beside the pods.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DATA_CENTERS, seedCatalog, type FakeCloud, type FakeGpuType, type StockLevel } from './catalog.ts';
import { GraphqlFailure, runGraphql, type Args, type TypeDef } from './graphql.ts';

export type { FakeGpuType } from './catalog.ts';

export interface FakeRunpodRequest {
  surface: 'rest' | 'graphql';
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  /** Parsed JSON when the body was JSON, the raw text otherwise, undefined when empty. */
  body: unknown;
}

/** A v2 Pod, as the fake stores and returns it. */
export interface FakePod {
  id: string;
  name: string;
  image: string;
  args: string;
  disk: number;
  ports: string[];
  env: Record<string, string>;
  registry: string | null;
  status: 'PROVISIONING' | 'STARTING' | 'RUNNING' | 'EXITED' | 'ERROR' | 'TERMINATED';
  actions: string[];
  mounts: Record<string, unknown>;
  gpu: { id: string; count: number };
  cloud: FakeCloud;
  dataCenterId: string | null;
  cudaVersion: string | null;
  ssh: { proxy: SshEndpoint | null; direct: SshEndpoint | null };
  template: string | null;
  cost: number;
  locked: boolean;
  globalNetworking: { enabled: boolean };
  runtime: { uptime: number; ports: { private: number; public: number | null; type: string; ip: string | null }[]; gpus: unknown[] } | null;
  createdAt: string;
  startedAt: string | null;
  cluster?: { id: string; role: string };
}

interface SshEndpoint {
  host: string;
  port: number;
  username: string;
  command: string;
}

export interface FailureOptions {
  /** Seconds (or an HTTP date) for Retry-After; 429s default to "0". */
  retryAfter?: string;
  /** Which endpoint family the failure hits; default both. */
  surface?: 'rest' | 'graphql' | 'any';
  /** For POST /v2/pods and POST /v2/network-volumes: create the pod or volume first, then answer with the failure (a lost create). */
  afterCommit?: boolean;
  /** Only requests with this method (default any). */
  method?: string;
  /** Only requests to this exact path (default any). */
  path?: string;
}

export interface FakeRunpodKnobs {
  /** Delay before every answer, in ms. */
  latencyMs: number;
  /** Requests per minute before REST answers 429 (shown in RateLimit-Policy). */
  minuteQuota: number;
  /** POST /v2/pods creates the pod, then never answers (until the server closes). */
  createTimeout: boolean;
  /** POST /v2/pods answers 402. */
  insufficientBalance: boolean;
  /** The next `count` matching requests answer `status` (before auth, as a gateway would). */
  failNext(count: number, status: number, options?: FailureOptions): void;
  /** The next `count` GraphQL requests answer HTTP 200 with `errors`. */
  graphqlErrorsNext(count: number, message?: string): void;
  /** Every provisioning pod becomes RUNNING, with a public 22/tcp mapping and direct SSH. */
  runPods(): void;
  /** The type's spot price per GPU in a cloud moves (null: no spot market): spot pods there bidding under it are interrupted. */
  setSpotPrice(gpuTypeId: string, cloud: FakeCloud, perGpu: number | null): void;
  /** RunPod takes the spot pod back now (stopped, as an interruption is). */
  interrupt(podId: string): void;
}

export interface SeedPodInput {
  name: string;
  env?: Record<string, string>;
  gpuTypeId?: string;
  count?: number;
  cloud?: FakeCloud;
  /** A cluster member: hidden from GET /v2/pods unless includeClusterPods=true. */
  cluster?: boolean;
}

/** A v2 NetworkVolume. */
export interface FakeNetworkVolume {
  id: string;
  name: string;
  size: number;
  dataCenter: string;
  type: 'STANDARD' | 'HIGH_PERFORMANCE';
}

/** A container registry credential: RunPod never returns username or password; the fake keeps them for tests. */
export interface FakeRegistry {
  id: string;
  name: string;
  username: string;
  password: string;
}

export interface FakeRunpodState {
  readonly apiKey: string;
  networkVolumes: Map<string, FakeNetworkVolume>;
  registries: Map<string, FakeRegistry>;
  /** The catalog; tests may change prices, stock and counts in place. */
  catalog: FakeGpuType[];
  pods: Map<string, FakePod>;
  /** The bid per GPU of each spot pod, by pod id: v2's Pod has no such field. */
  spotBids: Map<string, number>;
  requests: FakeRunpodRequest[];
  /** A pod made outside the adapter (another tool, a person, a cluster). */
  seedPod(input: SeedPodInput): FakePod;
}

export interface FakeRunpod {
  url: string;
  apiKey: string;
  state: FakeRunpodState;
  knobs: FakeRunpodKnobs;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------

class Reply {
  readonly status: number;
  readonly body: unknown;
  readonly contentType: string;
  readonly headers: Record<string, string>;
  constructor(status: number, body: unknown, contentType = 'application/json', headers: Record<string, string> = {}) {
    this.status = status;
    this.body = body;
    this.contentType = contentType;
    this.headers = headers;
  }
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

const problem = (status: number, detail: string, errors?: string[], headers: Record<string, string> = {}): Reply =>
  new Reply(status, { title: TITLES[status] ?? 'Error', status, detail, ...(errors ? { errors } : {}) }, 'application/problem+json', headers);

const ok = (body: unknown, status = 200): Reply => new Reply(status, body);

const CREATE_KEYS = new Set([
  'name', 'image', 'args', 'disk', 'env', 'ports', 'registry', 'cloud', 'cpu', 'dataCenterIds',
  'globalNetworking', 'gpu', 'mounts', 'startJupyter', 'startSsh', 'templateId',
]);
const GPU_KEYS = new Set(['id', 'count', 'allowedCudaVersions', 'minCudaVersion']);
const NETWORK_VOLUME_KEYS = new Set(['name', 'size', 'dataCenter', 'type']);
const REGISTRY_KEYS = new Set(['name', 'username', 'password']);
const MOUNT_KEYS = new Set(['persistent', 'network']);
const NETWORK_MOUNT_KEYS = new Set(['volumeId', 'path']);
/** What RunPod answers when a network volume still belongs to a pod (its GraphQL message, seen by dstack). */
const VOLUME_IN_USE = 'You must remove this network volume from all pods before deleting it.';

/** Schema errors of a `mounts` object (422), as the v2 contract states it: one network volume at most. */
const mountErrors = (mounts: unknown): string[] => {
  if (!isObject(mounts)) return ['$.mounts: expected object'];
  const errors = unknownKeys(mounts, MOUNT_KEYS, '$.mounts');
  if (mounts.network !== undefined) {
    if (!Array.isArray(mounts.network)) return [...errors, '$.mounts.network: expected array'];
    if (mounts.network.length > 1) errors.push('$.mounts.network: maxItems 1');
    mounts.network.forEach((entry, i) => {
      if (!isObject(entry)) return errors.push(`$.mounts.network[${i}]: expected object`);
      errors.push(...unknownKeys(entry, NETWORK_MOUNT_KEYS, `$.mounts.network[${i}]`));
      if (typeof entry.volumeId !== 'string') errors.push(`$.mounts.network[${i}]: missing property 'volumeId'`);
      if (typeof entry.path !== 'string') errors.push(`$.mounts.network[${i}]: missing property 'path'`);
      return undefined;
    });
  }
  return errors;
};
const PATCH_KEYS = new Set(['name', 'image', 'args', 'disk', 'ports', 'env', 'registry', 'mounts', 'locked', 'globalNetworking']);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const unknownKeys = (body: Record<string, unknown>, allowed: Set<string>, at: string): string[] =>
  Object.keys(body).filter((k) => !allowed.has(k)).map((k) => `${at}: additional properties '${k}' not allowed`);

const cloudKey = (cloud: FakeCloud): 'secure' | 'community' => (cloud === 'SECURE' ? 'secure' : 'community');

/** The stock level for a count in a cloud, or null when it cannot be placed now. */
const stockFor = (gpu: FakeGpuType, cloud: FakeCloud, count: number, dataCenters?: readonly string[]): StockLevel | null => {
  const key = cloudKey(cloud);
  if (!gpu.clouds[key] || count < 1 || count > gpu.maxCount[key] || count > gpu.freeCount[key]) return null;
  if (dataCenters && !gpu.dataCenterIds.some((dc) => dataCenters.includes(dc))) return null;
  return gpu.stock[key];
};

const roundCost = (value: number): number => Number(value.toFixed(10));

// ---------------------------------------------------------------------------------------------

export async function startFakeRunpod(options: { apiKey?: string } = {}): Promise<FakeRunpod> {
  const apiKey = options.apiKey ?? `rpa_fake_${randomBytes(8).toString('hex')}`;
  const failures: ({ status: number } & FailureOptions)[] = [];
  const graphqlErrors: string[] = [];
  const hanging = new Set<ServerResponse>();
  let window = { startedAt: Date.now(), used: 0 };
  let publicPort = 40_000;

  const knobs: FakeRunpodKnobs = {
    latencyMs: 0,
    minuteQuota: 600,
    createTimeout: false,
    insufficientBalance: false,
    failNext(count, status, failureOptions = {}) {
      for (let i = 0; i < count; i += 1) failures.push({ status, ...failureOptions });
    },
    graphqlErrorsNext(count, message = 'Something went wrong. Please try again later or contact support.') {
      for (let i = 0; i < count; i += 1) graphqlErrors.push(message);
    },
    runPods() {
      for (const pod of state.pods.values()) {
        if (pod.status !== 'PROVISIONING' && pod.status !== 'STARTING') continue;
        run(pod);
      }
    },
    setSpotPrice(gpuTypeId, cloud, perGpu) {
      const gpu = state.catalog.find((g) => g.id === gpuTypeId);
      if (!gpu) throw new Error(`fake runpod: no GPU type ${gpuTypeId}`);
      gpu.spotPrice[cloudKey(cloud)] = perGpu;
      for (const [podId, bid] of state.spotBids) {
        const pod = state.pods.get(podId);
        if (pod && pod.gpu.id === gpuTypeId && pod.cloud === cloud && (perGpu === null || bid < perGpu)) interrupt(pod);
      }
    },
    interrupt(podId) {
      const pod = state.pods.get(podId);
      if (!pod || !state.spotBids.has(podId)) throw new Error(`fake runpod: no spot pod ${podId}`);
      interrupt(pod);
    },
  };

  /** An interruption stops the pod: its container killed, its volume kept; the pod stays until terminated. */
  const interrupt = (pod: FakePod): void => {
    if (pod.status === 'EXITED' || pod.status === 'TERMINATED') return;
    stop(pod);
  };

  const newPod = (input: {
    name: string; image: string; gpu: { id: string; count: number }; cloud: FakeCloud; env: Record<string, string>;
    ports: string[]; disk: number; args: string; dataCenterId: string | null; cost: number;
  }): FakePod => {
    const id = randomBytes(7).toString('hex').slice(0, 10);
    const pod: FakePod = {
      id,
      name: input.name,
      image: input.image,
      args: input.args,
      disk: input.disk,
      ports: input.ports,
      env: input.env,
      registry: null,
      status: 'PROVISIONING',
      actions: ['stop', 'terminate'],
      mounts: {},
      gpu: input.gpu,
      cloud: input.cloud,
      dataCenterId: input.dataCenterId,
      cudaVersion: '12.8',
      ssh: {
        proxy: { host: 'ssh.runpod.io', port: 22, username: `${id}-64411eb2`, command: `ssh ${id}-64411eb2@ssh.runpod.io` },
        direct: null,
      },
      template: null,
      cost: input.cost,
      locked: false,
      globalNetworking: { enabled: false },
      runtime: null,
      createdAt: new Date().toISOString(),
      startedAt: null,
    };
    state.pods.set(id, pod);
    return pod;
  };

  const run = (pod: FakePod): void => {
    publicPort += 1;
    const ip = `203.0.113.${(publicPort % 250) + 1}`;
    const gpu = state.catalog.find((g) => g.id === pod.gpu.id);
    pod.status = 'RUNNING';
    pod.actions = ['stop', 'restart', 'terminate'];
    pod.startedAt = new Date().toISOString();
    const bid = state.spotBids.get(pod.id);
    // a spot pod costs its bid
    pod.cost = bid !== undefined ? roundCost(bid * pod.gpu.count) : gpu ? roundCost(gpu.price[cloudKey(pod.cloud)] * pod.gpu.count) : pod.cost;
    pod.runtime = { uptime: 0, ports: [{ private: 22, public: publicPort, type: 'tcp', ip }], gpus: [] };
    pod.ssh.direct = pod.ports.includes('22/tcp')
      ? { host: ip, port: publicPort, username: 'root', command: `ssh root@${ip} -p ${publicPort}` }
      : null;
  };

  const stop = (pod: FakePod): void => {
    pod.status = 'EXITED';
    pod.actions = ['start', 'terminate'];
    pod.cost = 0;
    pod.runtime = null;
    pod.ssh.direct = null;
  };

  const state: FakeRunpodState = {
    apiKey,
    networkVolumes: new Map(),
    registries: new Map(),
    catalog: seedCatalog(),
    pods: new Map(),
    spotBids: new Map(),
    requests: [],
    seedPod(input) {
      const gpu = state.catalog.find((g) => g.id === (input.gpuTypeId ?? 'NVIDIA GeForce RTX 4090'))!;
      const cloud = input.cloud ?? 'SECURE';
      const count = input.count ?? 1;
      const pod = newPod({
        name: input.name, image: 'runpod/base:0.6.2', gpu: { id: gpu.id, count }, cloud, env: input.env ?? {},
        ports: ['22/tcp'], disk: 20, args: '', dataCenterId: gpu.dataCenterIds[0] ?? null,
        cost: roundCost(gpu.price[cloudKey(cloud)] * count),
      });
      if (input.cluster) pod.cluster = { id: `cl_${pod.id}`, role: 'WORKER' };
      return pod;
    },
  };

  // ------------------------------------------------------------------------------- catalog (v2)

  const v2GpuType = (gpu: FakeGpuType, params: URLSearchParams, single: boolean): Record<string, unknown> | null => {
    const body: Record<string, unknown> = {
      id: gpu.id,
      name: gpu.name,
      pool: null,
      manufacturer: gpu.manufacturer,
      memory: gpu.memory,
      secure: gpu.clouds.secure,
      community: gpu.clouds.community,
      price: { secure: gpu.price.secure, community: gpu.price.community },
      maxCount: { secure: gpu.maxCount.secure, community: gpu.maxCount.community },
    };
    if (params.get('include') !== 'AVAILABILITY') return body;
    const count = Number(params.get('count') ?? '1');
    const cloud = (params.get('cloud') ?? 'SECURE') as FakeCloud;
    const countries = params.get('countryCodes')?.split(',');
    const dcs = gpu.dataCenterIds.filter((id) => !countries || countries.includes(DATA_CENTERS.find((d) => d.id === id)?.country ?? ''));
    if (countries && dcs.length === 0) {
      if (!single) return null;
      return { ...body, availability: 'NONE' };
    }
    const level = stockFor(gpu, cloud, count)?.toUpperCase() ?? 'NONE';
    return {
      ...body,
      availability: level,
      ...(level === 'NONE' ? {} : { dataCenters: dcs.map((id) => ({ id, name: DATA_CENTERS.find((d) => d.id === id)?.name ?? id, availability: level })) }),
    };
  };

  const checkCatalogParams = (params: URLSearchParams): Reply | null => {
    const include = params.get('include');
    if (include !== null && include !== 'AVAILABILITY') return problem(422, 'Request validation failed.', [`include: value must be one of 'AVAILABILITY'`]);
    if (include !== null && params.get('product') === null) return problem(400, 'product is required with include=AVAILABILITY');
    for (const name of ['product', 'count', 'cloud', 'countryCodes', 'cudaVersions', 'minCudaVersion']) {
      if (include === null && params.has(name)) return problem(400, `${name} is only valid with include=AVAILABILITY`);
    }
    const cloud = params.get('cloud');
    if (cloud !== null && cloud !== 'SECURE' && cloud !== 'COMMUNITY') return problem(422, 'Request validation failed.', [`cloud: value must be one of 'SECURE', 'COMMUNITY'`]);
    const count = params.get('count');
    if (count !== null && !/^[1-9]\d*$/.test(count)) return problem(422, 'Request validation failed.', ['count: must be >= 1']);
    const countries = params.get('countryCodes');
    if (countries !== null && !countries.split(',').every((c) => /^[A-Z]{2}$/.test(c))) {
      return problem(422, 'Request validation failed.', ['countryCodes: each entry must match ^[A-Z]{2}$']);
    }
    return null;
  };

  // ------------------------------------------------------------------------------- pods (v2)

  const createPod = (body: unknown, afterCommit: FailureOptions & { status: number } | undefined): Reply | 'hang' => {
    if (!isObject(body)) return problem(422, 'Request validation failed.', ['$: expected an object']);
    const errors = unknownKeys(body, CREATE_KEYS, '$');
    if (typeof body.name !== 'string' || body.name.length === 0) errors.push(`$: missing property 'name'`);
    if (body.image === undefined && body.templateId === undefined) errors.push(`$: missing property 'image'`);
    if (body.image !== undefined && typeof body.image !== 'string') errors.push('$.image: expected string');
    if (body.cloud !== undefined && body.cloud !== 'SECURE' && body.cloud !== 'COMMUNITY') errors.push(`$.cloud: value must be one of 'SECURE', 'COMMUNITY'`);
    if (body.env !== undefined && (!isObject(body.env) || Object.values(body.env).some((v) => typeof v !== 'string'))) {
      errors.push('$.env: additionalProperties must be strings');
    }
    if (body.ports !== undefined && (!Array.isArray(body.ports) || body.ports.some((p) => typeof p !== 'string' || !/^\d{1,5}\/(tcp|http|udp)$/.test(p)))) {
      errors.push('$.ports: each entry must read port/protocol');
    }
    if (body.args !== undefined && typeof body.args !== 'string') errors.push('$.args: expected string');
    if (body.registry !== undefined && body.registry !== null && typeof body.registry !== 'string') errors.push('$.registry: expected string or null');
    if (body.dataCenterIds !== undefined && (!Array.isArray(body.dataCenterIds) || body.dataCenterIds.some((d) => typeof d !== 'string'))) {
      errors.push('$.dataCenterIds: expected array of strings');
    }
    if (body.mounts !== undefined) errors.push(...mountErrors(body.mounts));
    if (body.disk !== undefined && (typeof body.disk !== 'number' || !Number.isInteger(body.disk) || body.disk < 1)) errors.push('$.disk: must be >= 1');
    if (body.startSsh !== undefined && typeof body.startSsh !== 'boolean') errors.push('$.startSsh: expected boolean');
    if (isObject(body.gpu)) {
      errors.push(...unknownKeys(body.gpu, GPU_KEYS, '$.gpu'));
      if (typeof body.gpu.id !== 'string') errors.push(`$.gpu: missing property 'id'`);
      if (body.gpu.count !== undefined && (typeof body.gpu.count !== 'number' || !Number.isInteger(body.gpu.count) || body.gpu.count < 1)) errors.push('$.gpu.count: must be >= 1');
    } else if (body.gpu !== undefined) {
      errors.push('$.gpu: expected object');
    }
    if (errors.length > 0) return problem(422, 'Request validation failed.', errors);
    if ((body.gpu === undefined) === (body.cpu === undefined)) return problem(400, 'exactly one of gpu or cpu must be set');
    if (body.cpu !== undefined) return problem(400, 'CPU pods are not available in this fake');

    const gpuRequest = body.gpu as { id: string; count?: number };
    const gpu = state.catalog.find((g) => g.id === gpuRequest.id);
    if (!gpu) return problem(400, `GPU type '${gpuRequest.id}' does not exist`);
    const cloud = (body.cloud as FakeCloud | undefined) ?? 'SECURE';
    const count = gpuRequest.count ?? 1;
    const key = cloudKey(cloud);
    if (!gpu.clouds[key]) return problem(400, `${gpu.name} is not offered on ${cloud} cloud`);
    if (count > gpu.maxCount[key]) return problem(400, `at most ${gpu.maxCount[key]} x ${gpu.name} fit on one ${cloud} machine`);
    let dataCenterIds = Array.isArray(body.dataCenterIds) ? (body.dataCenterIds as string[]) : undefined;
    const mounts = (body.mounts ?? {}) as { persistent?: unknown; network?: { volumeId: string; path: string }[] };
    if (mounts.persistent !== undefined && mounts.network !== undefined) return problem(400, 'at most one of mounts.persistent or mounts.network may be set');
    const networkMount = mounts.network?.[0];
    if (networkMount) {
      const volume = state.networkVolumes.get(networkMount.volumeId);
      if (!volume) return problem(400, `network volume '${networkMount.volumeId}' not found`);
      if (cloud !== 'SECURE') return problem(400, 'network volumes can only be attached to Secure Cloud pods');
      if (dataCenterIds?.length && !dataCenterIds.includes(volume.dataCenter)) {
        return problem(400, `network volume '${volume.id}' is in ${volume.dataCenter}, which dataCenterIds does not allow`);
      }
      // a pod with a network volume is placed in the volume's data center, or nowhere
      dataCenterIds = [volume.dataCenter];
    }
    if (typeof body.registry === 'string' && !state.registries.has(body.registry)) return problem(400, `container registry credential '${body.registry}' not found`);
    if (stockFor(gpu, cloud, count, dataCenterIds?.length ? dataCenterIds : undefined) === null) {
      return problem(400, 'There are no longer any instances available with the requested specifications. Please refresh and try again.');
    }
    if (knobs.insufficientBalance) return problem(402, 'insufficient balance to deploy this pod');

    const pod = newPod({
      name: body.name as string,
      image: body.image as string,
      gpu: { id: gpu.id, count },
      cloud,
      env: { ...((body.env as Record<string, string> | undefined) ?? {}) },
      ports: (body.ports as string[] | undefined) ?? [],
      disk: (body.disk as number | undefined) ?? 50,
      args: typeof body.args === 'string' ? body.args : '',
      dataCenterId: gpu.dataCenterIds.find((dc) => !dataCenterIds?.length || dataCenterIds.includes(dc)) ?? null,
      cost: roundCost(gpu.price[key] * count),
    });
    pod.registry = typeof body.registry === 'string' ? body.registry : null;
    if (networkMount) pod.mounts = { network: [{ volumeId: networkMount.volumeId, path: networkMount.path }] };
    if (afterCommit) return failureReply(afterCommit);
    if (knobs.createTimeout) return 'hang';
    return ok(pod, 201);
  };

  const podRoute = (method: string, id: string, action: boolean, body: unknown): Reply => {
    const pod = state.pods.get(id);
    if (!pod) return problem(404, 'pod not found');
    if (method === 'GET' && !action) return ok(pod);
    if (pod.cluster) return problem(409, 'pod belongs to a cluster; manage it through /v2/clusters/{id}');
    if (method === 'DELETE' && !action) {
      state.pods.delete(id);
      state.spotBids.delete(id);
      return new Reply(204, undefined);
    }
    if (method === 'PATCH' && !action) {
      if (!isObject(body)) return problem(422, 'Request validation failed.', ['$: expected an object']);
      const errors = unknownKeys(body, PATCH_KEYS, '$');
      if (errors.length > 0) return problem(422, 'Request validation failed.', errors);
      if (typeof body.name === 'string') pod.name = body.name;
      if (isObject(body.env)) pod.env = body.env as Record<string, string>;
      return ok(pod);
    }
    if (method === 'POST' && action) {
      if (!isObject(body) || Object.keys(body).some((k) => k !== 'action')) return problem(422, 'Request validation failed.', ['$: only "action" is allowed']);
      const verb = body.action;
      if (verb !== 'start' && verb !== 'stop' && verb !== 'restart' && verb !== 'terminate') {
        return problem(422, 'Request validation failed.', [`$.action: value must be one of 'start', 'stop', 'restart', 'terminate'`]);
      }
      if (!pod.actions.includes(verb)) return problem(409, `cannot ${verb} a pod in status ${pod.status}`);
      if (verb === 'terminate') {
        state.pods.delete(id);
        state.spotBids.delete(id);
        return new Reply(204, undefined);
      }
      if (verb === 'stop') stop(pod);
      if (verb === 'start') {
        pod.status = 'STARTING';
        pod.actions = ['stop', 'terminate'];
      }
      if (verb === 'restart') run(pod);
      return ok(pod);
    }
    return problem(405, 'The requested method is not allowed for this path.', undefined, { allow: action ? 'POST' : 'GET, PATCH, DELETE' });
  };

  // ------------------------------------------------------------------------------- network volumes and registries (v2)

  const notAllowed = (allow: string) => problem(405, 'The requested method is not allowed for this path.', undefined, { allow });
  const newId = () => randomBytes(7).toString('hex').slice(0, 10);

  const networkVolumeRoute = (method: string, path: string, body: unknown): Reply => {
    const id = path === '/v2/network-volumes' ? null : decodeURIComponent(path.slice('/v2/network-volumes/'.length));
    if (id === null) {
      if (method === 'GET') return ok({ networkVolumes: [...state.networkVolumes.values()] });
      if (method !== 'POST') return notAllowed('GET, POST');
      if (!isObject(body)) return problem(422, 'Request validation failed.', ['$: expected an object']);
      const errors = unknownKeys(body, NETWORK_VOLUME_KEYS, '$');
      if (typeof body.name !== 'string' || body.name.length === 0) errors.push(`$: missing property 'name'`);
      if (typeof body.dataCenter !== 'string' || body.dataCenter.length === 0) errors.push(`$: missing property 'dataCenter'`);
      if (typeof body.size !== 'number' || !Number.isInteger(body.size) || body.size < 10 || body.size > 4096) errors.push('$.size: must be an integer from 10 to 4096');
      if (body.type !== undefined && body.type !== 'STANDARD' && body.type !== 'HIGH_PERFORMANCE') errors.push(`$.type: value must be one of 'STANDARD', 'HIGH_PERFORMANCE'`);
      if (errors.length > 0) return problem(422, 'Request validation failed.', errors);
      if (!DATA_CENTERS.some((d) => d.listed && d.id === body.dataCenter)) return problem(400, `data center '${String(body.dataCenter)}' does not offer network volumes`);
      const volume: FakeNetworkVolume = {
        id: newId(), name: body.name as string, size: body.size as number, dataCenter: body.dataCenter as string,
        type: (body.type as FakeNetworkVolume['type'] | undefined) ?? 'STANDARD',
      };
      state.networkVolumes.set(volume.id, volume);
      return ok(volume, 201);
    }
    const volume = state.networkVolumes.get(id);
    if (!volume) return problem(404, 'network volume not found');
    if (method === 'GET') return ok(volume);
    if (method === 'DELETE') {
      if ([...state.pods.values()].some((pod) => (pod.mounts as { network?: { volumeId: string }[] }).network?.some((m) => m.volumeId === id))) {
        return problem(400, VOLUME_IN_USE);
      }
      state.networkVolumes.delete(id);
      return new Reply(204, undefined);
    }
    return notAllowed('GET, PATCH, DELETE');
  };

  const registryRoute = (method: string, path: string, body: unknown): Reply => {
    const id = path === '/v2/registries' ? null : decodeURIComponent(path.slice('/v2/registries/'.length));
    const wire = (r: FakeRegistry) => ({ id: r.id, name: r.name });
    if (id === null) {
      if (method === 'GET') return ok({ registries: [...state.registries.values()].map(wire) });
      if (method !== 'POST') return notAllowed('GET, POST');
      if (!isObject(body)) return problem(422, 'Request validation failed.', ['$: expected an object']);
      const errors = unknownKeys(body, REGISTRY_KEYS, '$');
      for (const field of ['name', 'username', 'password']) {
        if (typeof body[field] !== 'string' || (body[field] as string).length === 0) errors.push(`$: missing property '${field}'`);
      }
      if (errors.length > 0) return problem(422, 'Request validation failed.', errors);
      const registry: FakeRegistry = { id: `reg_${newId()}`, name: body.name as string, username: body.username as string, password: body.password as string };
      state.registries.set(registry.id, registry);
      return ok(wire(registry), 201);
    }
    const registry = state.registries.get(id);
    if (!registry) return problem(404, 'container registry credential not found');
    if (method === 'GET') return ok(wire(registry));
    if (method === 'DELETE') {
      if ([...state.pods.values()].some((pod) => pod.registry === id)) return problem(400, 'Registry credential is in use by a pod and cannot be deleted');
      state.registries.delete(id);
      return new Reply(204, undefined);
    }
    return notAllowed('GET, DELETE');
  };

  // ------------------------------------------------------------------------------- GraphQL

  const lowestPriceType: TypeDef = {
    name: 'LowestPrice',
    fields: {
      minimumBidPrice: { resolve: (s) => (s as LowestPriceSource).bid },
      uninterruptablePrice: { resolve: (s) => (s as LowestPriceSource).price },
      minVcpu: { resolve: (s) => (s as LowestPriceSource).vcpu },
      minMemory: { resolve: (s) => (s as LowestPriceSource).memory },
      stockStatus: { resolve: (s) => (s as LowestPriceSource).stock },
      countryCode: { resolve: (s) => (s as LowestPriceSource).country },
    },
  };

  interface LowestPriceSource {
    bid: number | null;
    price: number | null;
    vcpu: number | null;
    memory: number | null;
    stock: StockLevel | null;
    country: string | null;
  }

  const lowestPrice = (gpu: FakeGpuType, input: Args): LowestPriceSource => {
    const count = typeof input.gpuCount === 'number' ? input.gpuCount : 1;
    const dcFilter = typeof input.dataCenterId === 'string' ? [input.dataCenterId] : undefined;
    const country = typeof input.countryCode === 'string' ? input.countryCode : null;
    const byCountry = country ? DATA_CENTERS.filter((d) => d.country === country).map((d) => d.id) : undefined;
    const filter = dcFilter ?? byCountry;
    const clouds: FakeCloud[] = input.secureCloud === true ? ['SECURE'] : input.secureCloud === false ? ['COMMUNITY'] : ['COMMUNITY', 'SECURE'];
    for (const cloud of clouds) {
      const stock = stockFor(gpu, cloud, count, filter);
      if (stock === null) continue;
      const key = cloudKey(cloud);
      return {
        bid: gpu.spotPrice[key] === null ? null : roundCost(gpu.spotPrice[key]! * count),
        price: roundCost(gpu.price[key] * count),
        vcpu: gpu.vcpuPerGpu * count,
        memory: gpu.ramGbPerGpu * count,
        stock,
        country: DATA_CENTERS.find((d) => gpu.dataCenterIds.includes(d.id) && (!filter || filter.includes(d.id)))?.country ?? null,
      };
    }
    // Out of stock: RunPod answers the object with no size and a null stock status.
    return { bid: null, price: null, vcpu: null, memory: null, stock: null, country: null };
  };

  const gpuTypeGql: TypeDef = {
    name: 'GpuType',
    fields: {
      id: { resolve: (g) => (g as FakeGpuType).id },
      displayName: { resolve: (g) => (g as FakeGpuType).name },
      manufacturer: { resolve: (g) => (g as FakeGpuType).manufacturer.charAt(0) + (g as FakeGpuType).manufacturer.slice(1).toLowerCase() },
      memoryInGb: { resolve: (g) => (g as FakeGpuType).memory },
      secureCloud: { resolve: (g) => (g as FakeGpuType).clouds.secure },
      communityCloud: { resolve: (g) => (g as FakeGpuType).clouds.community },
      securePrice: { resolve: (g) => (g as FakeGpuType).price.secure },
      communityPrice: { resolve: (g) => (g as FakeGpuType).price.community },
      secureSpotPrice: { resolve: (g) => (g as FakeGpuType).spotPrice.secure },
      communitySpotPrice: { resolve: (g) => (g as FakeGpuType).spotPrice.community },
      maxGpuCount: { resolve: (g) => Math.max((g as FakeGpuType).maxCount.secure, (g as FakeGpuType).maxCount.community) },
      maxGpuCountSecureCloud: { resolve: (g) => (g as FakeGpuType).maxCount.secure },
      maxGpuCountCommunityCloud: { resolve: (g) => (g as FakeGpuType).maxCount.community },
      lowestPrice: { of: lowestPriceType, resolve: (g, args) => lowestPrice(g as FakeGpuType, isObject(args.input) ? args.input : {}) },
    },
  };

  const dataCenterGql: TypeDef = {
    name: 'DataCenter',
    fields: {
      id: { resolve: (d) => (d as (typeof DATA_CENTERS)[number]).id },
      name: { resolve: (d) => (d as (typeof DATA_CENTERS)[number]).name },
      listed: { resolve: (d) => (d as (typeof DATA_CENTERS)[number]).listed },
      location: { resolve: (d) => (d as (typeof DATA_CENTERS)[number]).country },
    },
  };

  const podGql: TypeDef = {
    name: 'Pod',
    fields: {
      id: { resolve: (p) => (p as FakePod).id },
      name: { resolve: (p) => (p as FakePod).name },
      desiredStatus: { resolve: (p) => ((p as FakePod).status === 'EXITED' ? 'EXITED' : 'RUNNING') },
      costPerHr: { resolve: (p) => (p as FakePod).cost },
      imageName: { resolve: (p) => (p as FakePod).image },
      machineId: { resolve: (p) => `m-${(p as FakePod).id}` },
    },
  };

  const queryGql: TypeDef = {
    name: 'Query',
    fields: {
      gpuTypes: {
        of: gpuTypeGql,
        resolve: (_, args) => {
          const input = isObject(args.input) ? args.input : {};
          return state.catalog.filter((g) => typeof input.id !== 'string' || g.id === input.id);
        },
      },
      countryCodes: { resolve: () => [...new Set(DATA_CENTERS.filter((d) => d.listed).map((d) => d.country))] },
      dataCenters: { of: dataCenterGql, resolve: () => DATA_CENTERS },
      myself: {
        of: { name: 'User', fields: { pods: { of: podGql, resolve: () => [...state.pods.values()] } } },
        resolve: () => ({}),
      },
    },
  };

  // ------------------------------------------------------------------------------- GraphQL spot create

  /** PodRentInterruptableInput's fields, as runpod-python and dstack send them. */
  const SPOT_INPUT: Record<string, 'string' | 'number' | 'int' | 'boolean' | 'env' | 'cloud' | 'strings'> = {
    bidPerGpu: 'number', cloudType: 'cloud', gpuTypeId: 'string', gpuCount: 'int', name: 'string', imageName: 'string',
    containerDiskInGb: 'int', volumeInGb: 'int', volumeMountPath: 'string', ports: 'string', env: 'env', dockerArgs: 'string',
    startSsh: 'boolean', startJupyter: 'boolean', networkVolumeId: 'string', dataCenterId: 'string', countryCode: 'string',
    containerRegistryAuthId: 'string', templateId: 'string', minVcpuCount: 'int', minMemoryInGb: 'int', supportPublicIp: 'boolean',
    allowedCudaVersions: 'strings', minCudaVersion: 'string', minDownload: 'int', minUpload: 'int', volumeKey: 'string',
  };

  /** GraphQL's own validation of an input object: an unknown field or a value of the wrong type is refused whole. */
  const checkSpotInput = (input: unknown): Args => {
    if (!isObject(input)) throw new GraphqlFailure('Variable "$input" of required type "PodRentInterruptableInput!" was not provided.');
    for (const [field, value] of Object.entries(input)) {
      const kind = SPOT_INPUT[field];
      if (!kind) throw new GraphqlFailure(`Field "${field}" is not defined by type "PodRentInterruptableInput".`);
      if (value === null) continue;
      const ok =
        kind === 'string' ? typeof value === 'string'
        : kind === 'number' ? typeof value === 'number' && Number.isFinite(value)
        : kind === 'int' ? Number.isInteger(value)
        : kind === 'boolean' ? typeof value === 'boolean'
        : kind === 'cloud' ? value === 'SECURE' || value === 'COMMUNITY' || value === 'ALL'
        : kind === 'strings' ? Array.isArray(value) && value.every((v) => typeof v === 'string')
        : Array.isArray(value) && value.every((e) => isObject(e) && typeof e.key === 'string' && typeof e.value === 'string');
      if (!ok) throw new GraphqlFailure(`Field "${field}" of type "PodRentInterruptableInput" has an invalid value: ${JSON.stringify(value)}.`);
    }
    for (const field of ['bidPerGpu', 'gpuTypeId']) {
      if (input[field] === undefined || input[field] === null) throw new GraphqlFailure(`Field "PodRentInterruptableInput.${field}" of required type was not provided.`);
    }
    return input;
  };

  const rentInterruptable = (raw: unknown): FakePod => {
    const input = checkSpotInput(raw);
    const gpu = state.catalog.find((g) => g.id === input.gpuTypeId);
    if (!gpu) throw new GraphqlFailure(`There is no GPU type ${String(input.gpuTypeId)}.`);
    const count = (input.gpuCount as number | undefined) ?? 1;
    const bid = input.bidPerGpu as number;
    const wanted = (input.cloudType as string | undefined) ?? 'ALL';
    const clouds: FakeCloud[] = wanted === 'ALL' ? ['COMMUNITY', 'SECURE'] : [wanted as FakeCloud];
    const volume = typeof input.networkVolumeId === 'string' ? state.networkVolumes.get(input.networkVolumeId) : undefined;
    if (typeof input.networkVolumeId === 'string' && !volume) throw new GraphqlFailure(`Network volume ${input.networkVolumeId} not found.`);
    if (volume && !clouds.includes('SECURE')) throw new GraphqlFailure('Network volumes can only be attached to Secure Cloud pods.');
    if (typeof input.containerRegistryAuthId === 'string' && !state.registries.has(input.containerRegistryAuthId)) {
      throw new GraphqlFailure(`Container registry auth ${input.containerRegistryAuthId} not found.`);
    }
    const dataCenters = volume ? [volume.dataCenter] : typeof input.dataCenterId === 'string' ? [input.dataCenterId] : undefined;
    const cloud = clouds.find((c) => (volume ? c === 'SECURE' : true) && gpu.spotPrice[cloudKey(c)] !== null && stockFor(gpu, c, count, dataCenters) !== null);
    if (!cloud) throw new GraphqlFailure('There are no longer any instances available with the requested specifications. Please refresh and try again.');
    const minimum = gpu.spotPrice[cloudKey(cloud)]!;
    if (bid < minimum) throw new GraphqlFailure(`Your bid of $${bid}/GPU/hr is below the current minimum bid of $${minimum}/GPU/hr for this GPU type.`);
    const env = Object.fromEntries(((input.env as { key: string; value: string }[] | undefined) ?? []).map((e) => [e.key, e.value]));
    const ports = typeof input.ports === 'string' && input.ports !== '' ? input.ports.split(',') : [];
    if (ports.some((p) => !/^\d{1,5}\/(tcp|http|udp)$/.test(p))) throw new GraphqlFailure(`Invalid ports "${String(input.ports)}".`);
    const pod = newPod({
      name: typeof input.name === 'string' ? input.name : 'my pod',
      image: typeof input.imageName === 'string' ? input.imageName : 'runpod/base:0.6.2',
      gpu: { id: gpu.id, count },
      cloud,
      env,
      ports,
      disk: (input.containerDiskInGb as number | undefined) ?? 50,
      args: typeof input.dockerArgs === 'string' ? input.dockerArgs : '',
      dataCenterId: gpu.dataCenterIds.find((dc) => !dataCenters || dataCenters.includes(dc)) ?? null,
      cost: roundCost(bid * count),
    });
    pod.registry = typeof input.containerRegistryAuthId === 'string' ? input.containerRegistryAuthId : null;
    if (volume) pod.mounts = { network: [{ volumeId: volume.id, path: typeof input.volumeMountPath === 'string' ? input.volumeMountPath : '/workspace' }] };
    state.spotBids.set(pod.id, bid);
    return pod;
  };

  const mutationGql: TypeDef = {
    name: 'Mutation',
    fields: {
      podRentInterruptable: { of: podGql, resolve: (_, args) => rentInterruptable(args.input) },
    },
  };

  // ------------------------------------------------------------------------------- routing

  const failureReply = (failure: { status: number } & FailureOptions): Reply => {
    if (failure.status === 429) {
      return problem(429, 'rate limit exceeded for the minute window', undefined, { 'retry-after': failure.retryAfter ?? '0' });
    }
    // Gateways in front of the API answer 502 with HTML, not a problem document.
    if (failure.status === 502) return new Reply(502, '<html><body><h1>502 Bad Gateway</h1></body></html>', 'text/html');
    return problem(failure.status, 'upstream error', undefined, failure.retryAfter ? { 'retry-after': failure.retryAfter } : {});
  };

  const rateLimitHeaders = (): Record<string, string> => {
    const now = Date.now();
    if (now - window.startedAt >= 60_000) window = { startedAt: now, used: 0 };
    window.used += 1;
    const resetIn = Math.max(1, Math.ceil((window.startedAt + 60_000 - now) / 1000));
    return {
      ratelimit: `"minute";r=${Math.max(0, knobs.minuteQuota - window.used)};t=${resetIn}, "hour";r=2800;t=1812, "day";r=49500;t=45012`,
      'ratelimit-policy': `"minute";q=${knobs.minuteQuota};w=60, "hour";q=3000;w=3600, "day";q=50000;w=86400`,
    };
  };

  const rest = (method: string, url: URL, body: unknown, headers: IncomingHttpHeaders, commit: ({ status: number } & FailureOptions) | undefined): Reply | 'hang' => {
    const auth = headers.authorization;
    if (!auth || !auth.startsWith('Bearer ')) return problem(401, 'missing bearer token');
    if (auth !== `Bearer ${apiKey}`) return problem(401, 'invalid or expired API key');
    const limits = rateLimitHeaders();
    if (window.used > knobs.minuteQuota) {
      const retryAfter = String(Math.max(1, Math.ceil((window.startedAt + 60_000 - Date.now()) / 1000)));
      return problem(429, 'rate limit exceeded for the minute window', undefined, { ...limits, 'retry-after': retryAfter });
    }
    const reply = restRoute(method, url, body, commit);
    if (reply === 'hang') return reply;
    return new Reply(reply.status, reply.body, reply.contentType, { ...limits, ...reply.headers });
  };

  const restRoute = (method: string, url: URL, body: unknown, commit: ({ status: number } & FailureOptions) | undefined): Reply | 'hang' => {
    const path = url.pathname.replace(/\/+$/, '');
    const params = url.searchParams;
    if (path === '/v2/catalog/gpus') {
      if (method !== 'GET') return problem(405, 'The requested method is not allowed for this path.', undefined, { allow: 'GET' });
      const invalid = checkCatalogParams(params);
      if (invalid) return invalid;
      return ok({ gpus: state.catalog.map((g) => v2GpuType(g, params, false)).filter((g) => g !== null) });
    }
    const gpuMatch = /^\/v2\/catalog\/gpus\/([^/]+)$/.exec(path);
    if (gpuMatch) {
      if (method !== 'GET') return problem(405, 'The requested method is not allowed for this path.', undefined, { allow: 'GET' });
      const invalid = checkCatalogParams(params);
      if (invalid) return invalid;
      const gpu = state.catalog.find((g) => g.id === decodeURIComponent(gpuMatch[1]!));
      return gpu ? ok(v2GpuType(gpu, params, true)) : problem(404, 'GPU type not found');
    }
    if (path === '/v2/catalog/datacenters' && method === 'GET') {
      const regions = params.get('regions')?.split(',');
      const withGpus = params.get('include') === 'GPU_AVAILABILITY';
      return ok({
        dataCenters: DATA_CENTERS.filter((d) => d.listed && (!regions || regions.includes(d.region))).map((d) => ({
          id: d.id, name: d.name, region: d.region, globalNetwork: false, networkVolumeTypes: ['STANDARD'], compliance: [],
          ...(withGpus
            ? {
                gpuAvailability: state.catalog
                  .filter((g) => g.dataCenterIds.includes(d.id))
                  .map((g) => ({ id: g.id, name: g.name, availability: (stockFor(g, 'SECURE', 1) ?? stockFor(g, 'COMMUNITY', 1))?.toUpperCase() ?? 'NONE' })),
              }
            : {}),
        })),
      });
    }
    if (path === '/v2/pods') {
      if (method === 'GET') {
        const withClusters = params.get('includeClusterPods') === 'true';
        return ok({ pods: [...state.pods.values()].filter((p) => withClusters || !p.cluster) });
      }
      if (method === 'POST') return createPod(body, commit);
      return problem(405, 'The requested method is not allowed for this path.', undefined, { allow: 'GET, POST' });
    }
    if (path === '/v2/network-volumes' || path.startsWith('/v2/network-volumes/')) {
      const reply = networkVolumeRoute(method, path, body);
      return commit && reply.status === 201 ? failureReply(commit) : reply;
    }
    if (path === '/v2/registries' || path.startsWith('/v2/registries/')) return registryRoute(method, path, body);
    const podMatch = /^\/v2\/pods\/([^/]+)(\/action)?$/.exec(path);
    if (podMatch) return podRoute(method, decodeURIComponent(podMatch[1]!), podMatch[2] !== undefined, body);
    return problem(404, 'resource not found');
  };

  const graphql = (method: string, url: URL, body: unknown, headers: IncomingHttpHeaders): Reply => {
    const auth = headers.authorization;
    const key = auth?.startsWith('Bearer ') ? auth.slice('Bearer '.length) : url.searchParams.get('api_key');
    if (key !== apiKey) return new Reply(401, { errors: [{ message: 'Unauthorized: invalid API key' }] });
    if (method !== 'POST' || !isObject(body)) return new Reply(400, { errors: [{ message: 'POST a JSON body with a query' }] });
    const injected = graphqlErrors.shift();
    if (injected !== undefined) return ok({ data: null, errors: [{ message: injected, path: ['gpuTypes'] }] });
    return ok(runGraphql(queryGql, body.query, body.variables, mutationGql));
  };

  const readBody = async (req: IncomingMessage): Promise<unknown> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    if (text === '') return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  };

  const send = (res: ServerResponse, reply: Reply): void => {
    const payload = reply.body === undefined ? '' : typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
    res.writeHead(reply.status, {
      ...(payload ? { 'content-type': reply.contentType } : {}),
      'content-length': Buffer.byteLength(payload),
      ...reply.headers,
    });
    res.end(payload);
  };

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://fake.runpod');
      const body = await readBody(req);
      const surface = url.pathname.replace(/\/+$/, '') === '/graphql' ? 'graphql' : 'rest';
      const method = req.method ?? 'GET';
      state.requests.push({ surface, method, path: url.pathname, query: Object.fromEntries(url.searchParams), headers: req.headers, body });
      if (knobs.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, knobs.latencyMs));

      const failure = failures[0];
      let commit: ({ status: number } & FailureOptions) | undefined;
      const hits = failure && (failure.surface === undefined || failure.surface === 'any' || failure.surface === surface) && (!failure.method || failure.method === method) && (!failure.path || failure.path === url.pathname);
      if (failure && hits) {
        failures.shift();
        if (failure.afterCommit && method === 'POST' && (url.pathname === '/v2/pods' || url.pathname === '/v2/network-volumes')) commit = failure;
        else return send(res, failureReply(failure));
      }

      const reply = surface === 'graphql' ? graphql(method, url, body, req.headers) : rest(method, url, body, req.headers, commit);
      if (reply === 'hang') {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      send(res, reply);
    })().catch((error: unknown) => {
      if (!res.headersSent) send(res, problem(500, `fake server bug: ${error instanceof Error ? error.message : String(error)}`));
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    apiKey,
    state,
    knobs,
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
