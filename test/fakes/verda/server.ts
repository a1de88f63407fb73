import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RecordedExchange } from '../../support/provider-description.ts';

/**
 * A local stand-in for Verda's public API v1 (formerly DataCrunch), written from its OpenAPI 3.1 description
 * ("Verda Cloud Public API", the extract verda-openapi.json among the provider descriptions (test/support/provider-description.ts); test/contract/providers/
 * verda-description.test.ts holds every exchange to it):
 * - OAuth2 client credentials at POST /v1/oauth2/token, answering `expires_in`; a bearer past its life gets 401
 *   `unauthorized_request`, as does a refresh token used twice.
 * - The `{code, message}` envelope with the codes the description lists; 404 `not_found` for what is gone.
 * - Creates answer the new id as plain text (202 for instances and volumes, 201 for keys and scripts).
 * - Instance types and their availability per location (on demand and spot) apart, prices as decimal strings.
 * - A deploy with no capacity answers 503 `service_unavailable` (the description: "no capacity in the selected
 *   location").
 * Where the description is silent, the fake chooses, and says so: an instance's `price_per_hour` of a spot
 * machine follows its type's spot price now; a deleted instance is gone at once (404 afterwards); a spot machine
 * whose capacity is taken back (`reclaimSpot`) reads `discontinued`; a volume attached to a live instance cannot
 * be deleted (400 `invalid_request`).
 */

export interface FakeVerdaType {
  instance_type: string;
  description: string;
  price_per_hour: string;
  spot_price: string;
  gpus: number;
  gpuDescription: string;
  /** The whole instance's GPU memory, as Verda states it. */
  gpuMemoryGb: number;
  cores: number;
  memoryGb: number;
  storageGb: number;
}

export interface FakeVerdaInstance {
  id: string;
  typeName: string;
  location: string;
  hostname: string;
  description: string;
  image: string;
  tags: { id: string; key: string; value: string }[];
  sshKeyIds: string[];
  startupScriptId: string | null;
  volumeIds: string[];
  isSpot: boolean;
  createdAt: number;
  /** Set to force a status; otherwise provisioning until bootMs has passed, then running. */
  status: string | null;
  ip: string;
}

export interface FakeVerdaVolume {
  id: string;
  name: string;
  type: string;
  size: number;
  location: string;
  status: string;
  tags: { id: string; key: string; value: string }[];
  createdAt: string;
}

export interface FakeVerdaState {
  clientId: string;
  clientSecret: string;
  /** The life of a bearer, in seconds, as `expires_in` states it. */
  tokenLifeSeconds: number;
  /** Live bearers and when each runs out (epoch ms, on `now`). */
  tokens: Map<string, number>;
  refreshTokens: Set<string>;
  /** The fake's clock for bearers (a test moves it). */
  now: () => number;
  types: Map<string, FakeVerdaType>;
  /** location code → types available on demand / as spot. */
  availability: Map<string, Set<string>>;
  spotAvailability: Map<string, Set<string>>;
  locations: { code: string; name: string; country_code: string }[];
  instances: Map<string, FakeVerdaInstance>;
  sshKeys: Map<string, { id: string; name: string; key: string }>;
  scripts: Map<string, { id: string; name: string; script: string; created_at: string }>;
  volumes: Map<string, FakeVerdaVolume>;
  volumePricePerGbMonth: number;
  exchanges: RecordedExchange[];
  bootMs: number;
  /** Refuse a delete while the machine is still provisioning, as dstack has seen Verda do ("Can't discontinue a provisioning instance"). */
  refuseProvisioningDeletes: boolean;
  failNext(count: number, status: number, options?: { path?: string; code?: string }): void;
  hangNext(count: number, path?: string): void;
  /** The spot price of a type, and of the spot machines of that type now. */
  setSpotPrice(typeName: string, price: string): void;
  /** Verda takes a spot machine's capacity back: it reads discontinued. */
  reclaimSpot(instanceId: string): void;
  exchangesTo(method: string, path: string): RecordedExchange[];
}

export interface FakeVerda {
  /** Base URL including /v1. */
  url: string;
  state: FakeVerdaState;
  close(): Promise<void>;
}

const type = (name: string, gpus: number, gpu: string, memPerGpu: number, price: string, spot: string, cores: number, mem: number): FakeVerdaType => ({
  instance_type: name,
  description: `${gpus}x ${gpu} ${memPerGpu}GB`,
  price_per_hour: price,
  spot_price: spot,
  gpus,
  gpuDescription: `${gpus}x ${gpu} ${memPerGpu}GB`,
  gpuMemoryGb: gpus * memPerGpu,
  cores,
  memoryGb: mem,
  storageGb: 0,
});

/** Prices are invented; names follow Verda's ("1H100.80S.30V": GPUs, model, memory, form, vCPUs). */
const TYPES: FakeVerdaType[] = [
  type('1H100.80S.30V', 1, 'H100 SXM5', 80, '2.29', '0.92', 30, 120),
  type('8H100.80S.176V', 8, 'H100 SXM5', 80, '18.32', '7.36', 176, 1480),
  type('1A100.80S.22V', 1, 'A100 SXM4', 80, '1.29', '0.52', 22, 120),
  type('4A100.40S.88V', 4, 'A100 SXM4', 40, '4.72', '1.88', 88, 480),
  type('1L40S.20V', 1, 'L40S', 48, '1.10', '0.45', 20, 60),
  type('1RTX6000ADA.10V', 1, 'RTX 6000 Ada', 48, '0.99', '0.40', 10, 60),
  { ...type('CPU.4V.16G', 0, '', 0, '0.05', '0.02', 4, 16), description: '4 vCPU 16 GB RAM', gpuDescription: '' },
];

const AVAILABILITY: Record<string, string[]> = {
  'FIN-01': ['1H100.80S.30V', '8H100.80S.176V', '1A100.80S.22V', 'CPU.4V.16G'],
  'FIN-02': ['1L40S.20V', '1RTX6000ADA.10V', '4A100.40S.88V'],
  'ICE-01': ['1H100.80S.30V', '1A100.80S.22V'],
};
const SPOT_AVAILABILITY: Record<string, string[]> = {
  'FIN-01': ['1H100.80S.30V', '1A100.80S.22V'],
  'FIN-02': ['1L40S.20V'],
  'ICE-01': [],
};

class Answer {
  readonly status: number;
  readonly body: unknown;
  /** Sent as text/plain-ish JSON text: Verda's new ids. */
  readonly plain: boolean;

  constructor(status: number, body: unknown, plain = false) {
    this.status = status;
    this.body = body;
    this.plain = plain;
  }
}

const ok = (body: unknown, status = 200) => new Answer(status, body);
const newId = (id: string, status: number) => new Answer(status, id, true);
const fail = (status: number, code: string, message: string) => new Answer(status, { code, message });
const invalid = (message: string) => fail(400, 'invalid_request', message);
const notFound = (what: string) => fail(404, 'not_found', `${what} not found`);

const isObject = (value: unknown): value is Record<string, any> => typeof value === 'object' && value !== null && !Array.isArray(value);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HOSTNAME = /^[a-zA-Z0-9][a-zA-Z0-9-]{0,62}$/;
const PREFIX = '/v1';

export async function startFakeVerda(options: { now?: () => number } = {}): Promise<FakeVerda> {
  const faults: { remaining: number; status: number; path: string | null; code: string | null }[] = [];
  const hangs: { remaining: number; path: string | null }[] = [];
  const hanging = new Set<ServerResponse>();
  let nextIp = 10;

  const state: FakeVerdaState = {
    clientId: 'fake-verda-client',
    clientSecret: 'fake-verda-secret',
    tokenLifeSeconds: 3600,
    tokens: new Map(),
    refreshTokens: new Set(),
    now: options.now ?? Date.now,
    types: new Map(TYPES.map((t) => [t.instance_type, { ...t }])),
    availability: new Map(Object.entries(AVAILABILITY).map(([code, names]) => [code, new Set(names)])),
    spotAvailability: new Map(Object.entries(SPOT_AVAILABILITY).map(([code, names]) => [code, new Set(names)])),
    locations: [
      { code: 'FIN-01', name: 'Finland 1', country_code: 'FI' },
      { code: 'FIN-02', name: 'Finland 2', country_code: 'FI' },
      { code: 'ICE-01', name: 'Iceland 1', country_code: 'IS' },
    ],
    instances: new Map(),
    sshKeys: new Map(),
    scripts: new Map(),
    volumes: new Map(),
    volumePricePerGbMonth: 0.2,
    exchanges: [],
    bootMs: 50,
    refuseProvisioningDeletes: false,
    failNext(count, status, opts = {}) {
      faults.push({ remaining: count, status, path: opts.path ?? null, code: opts.code ?? null });
    },
    hangNext(count, path) {
      hangs.push({ remaining: count, path: path ?? null });
    },
    setSpotPrice(typeName, price) {
      const entry = state.types.get(typeName);
      if (!entry) throw new Error(`no such type ${typeName}`);
      entry.spot_price = price;
    },
    reclaimSpot(instanceId) {
      const instance = state.instances.get(instanceId);
      if (!instance?.isSpot) throw new Error(`no spot instance ${instanceId}`);
      instance.status = 'discontinued';
    },
    exchangesTo(method, path) {
      return state.exchanges.filter((e) => e.method === method && e.path === `${PREFIX}${path}`);
    },
  };

  const statusOf = (i: FakeVerdaInstance) => i.status ?? (Date.now() - i.createdAt >= state.bootMs ? 'running' : 'provisioning');

  const typeWire = (t: FakeVerdaType) => ({
    best_for: ['training'],
    cpu: { description: `${t.cores} CPU`, number_of_cores: t.cores },
    deploy_warning: '',
    description: t.description,
    gpu: { description: t.gpuDescription, number_of_gpus: t.gpus },
    gpu_memory: { description: `${t.gpuMemoryGb}GB`, size_in_gigabytes: t.gpuMemoryGb },
    id: `type-${t.instance_type}`,
    instance_type: t.instance_type,
    memory: { description: `${t.memoryGb}GB RAM`, size_in_gigabytes: t.memoryGb },
    model: t.gpuDescription.replace(/^\d+x /, ''),
    name: t.instance_type,
    p2p: '',
    price_per_hour: t.price_per_hour,
    spot_price: t.spot_price,
    max_dynamic_price: t.price_per_hour,
    storage: { description: 'dynamic', size_in_gigabytes: t.storageGb },
    currency: 'usd',
    manufacturer: 'NVIDIA',
    display_name: t.gpuDescription,
    supported_os: ['ubuntu-24.04-cuda-12.8-open-docker', 'ubuntu-22.04'],
  });

  const instanceWire = (i: FakeVerdaInstance) => {
    const t = state.types.get(i.typeName)!;
    const status = statusOf(i);
    return {
      id: i.id,
      ip: status === 'running' ? i.ip : null,
      status,
      created_at: new Date(i.createdAt).toISOString(),
      cpu: { description: `${t.cores} CPU`, number_of_cores: t.cores },
      gpu: { description: t.gpuDescription, number_of_gpus: t.gpus },
      gpu_memory: { description: `${t.gpuMemoryGb}GB`, size_in_gigabytes: t.gpuMemoryGb },
      memory: { description: `${t.memoryGb}GB RAM`, size_in_gigabytes: t.memoryGb },
      storage: { description: 'dynamic', size_in_gigabytes: t.storageGb },
      hostname: i.hostname,
      description: i.description,
      tags: i.tags.map((tag) => ({ ...tag })),
      location: i.location,
      price_per_hour: Number(i.isSpot ? t.spot_price : t.price_per_hour),
      is_spot: i.isSpot,
      instance_type: i.typeName,
      image: i.image,
      os_name: i.image,
      startup_script_id: i.startupScriptId ?? '',
      ssh_key_ids: [...i.sshKeyIds],
      os_volume_id: randomUUID(),
      jupyter_token: '',
      contract: i.isSpot ? 'SPOT' : 'PAY_AS_YOU_GO',
      pricing: 'FIXED_PRICE',
      volume_ids: [...i.volumeIds],
    };
  };

  const liveInstanceOf = (volumeId: string) => [...state.instances.values()].find((i) => i.volumeIds.includes(volumeId) && statusOf(i) !== 'discontinued');

  const volumeWire = (v: FakeVerdaVolume) => {
    const holder = liveInstanceOf(v.id);
    return {
      id: v.id,
      instance_id: holder?.id ?? '',
      instances: holder ? [holder.id] : [],
      name: v.name,
      created_at: v.createdAt,
      status: holder ? 'attached' : v.status,
      size: v.size,
      is_os_volume: false,
      target: holder ? 'vdb' : '',
      type: v.type,
      location: v.location,
      ssh_key_ids: [],
      pseudo_path: `volume-${v.id.slice(0, 8)}`,
      create_directory_command: 'mkdir -p /mnt/volume',
      mount_command: `mount -t nfs nfs.fake:/volume-${v.id.slice(0, 8)} /mnt/volume`,
      filesystem_to_fstab_command: '',
      contract: 'PAY_AS_YOU_GO',
      base_hourly_cost: (v.size * state.volumePricePerGbMonth) / 730,
      monthly_price: v.size * state.volumePricePerGbMonth,
      currency: 'usd',
      long_term: {},
      tags: v.tags.map((tag) => ({ ...tag })),
    };
  };

  const tagsOf = (raw: unknown): { id: string; key: string; value: string }[] | null => {
    if (raw === undefined) return [];
    if (!Array.isArray(raw)) return null;
    const good = raw.every((t) => isObject(t) && typeof t.key === 'string' && t.key.length <= 63 && (t.value === undefined || (typeof t.value === 'string' && t.value.length <= 127)));
    return good ? raw.map((t) => ({ id: randomUUID(), key: t.key as string, value: (t.value as string | undefined) ?? '' })) : null;
  };

  const issueToken = () => {
    const access = `vat_${randomUUID()}`;
    const refresh = `vrt_${randomUUID()}`;
    state.tokens.set(access, state.now() + state.tokenLifeSeconds * 1000);
    state.refreshTokens.add(refresh);
    return ok({ access_token: access, token_type: 'Bearer', expires_in: state.tokenLifeSeconds, refresh_token: refresh, scope: 'cloud-api-v1' });
  };

  const token = (body: unknown): Answer => {
    if (!isObject(body)) return invalid('body must be a JSON object');
    if (body.grant_type === 'client_credentials') {
      if (body.client_id !== state.clientId || body.client_secret !== state.clientSecret) return fail(401, 'unauthorized_request', 'Invalid client credentials');
      return issueToken();
    }
    if (body.grant_type === 'refresh_token') {
      if (typeof body.refresh_token !== 'string' || !state.refreshTokens.delete(body.refresh_token)) return fail(401, 'unauthorized_request', 'Invalid refresh token');
      return issueToken();
    }
    return invalid('grant_type must be client_credentials or refresh_token');
  };

  const deploy = (body: unknown): Answer => {
    if (!isObject(body)) return invalid('body must be a JSON object');
    const { instance_type: typeName, image, hostname, location_code: location, description, ssh_key_ids: keys, startup_script_id: scriptId, existing_volumes: volumes, is_spot: isSpot } = body;
    if (typeof typeName !== 'string' || typeof image !== 'string' || typeof hostname !== 'string' || typeof location !== 'string') {
      return invalid('instance_type, image, hostname and location_code are required');
    }
    if (!HOSTNAME.test(hostname)) return invalid('hostname may hold letters, digits and hyphens, at most 63');
    const tags = tagsOf(body.tags);
    if (!tags) return invalid('tags must be {key, value} with a key of at most 63 and a value of at most 127 characters');
    const keyIds = keys === undefined ? [] : typeof keys === 'string' ? [keys] : keys;
    if (!Array.isArray(keyIds) || !keyIds.every((k) => typeof k === 'string' && state.sshKeys.has(k))) return invalid('ssh_key_ids: unknown SSH key');
    if (scriptId !== undefined && (typeof scriptId !== 'string' || !state.scripts.has(scriptId))) return invalid('startup_script_id: unknown script');
    if (volumes !== undefined && (!Array.isArray(volumes) || !volumes.every((v) => typeof v === 'string' && state.volumes.has(v)))) return invalid('existing_volumes: unknown volume');
    for (const volumeId of (volumes as string[] | undefined) ?? []) {
      if (state.volumes.get(volumeId)!.location !== location) return invalid(`volume ${volumeId} is not in ${location}`);
    }
    const entry = state.types.get(typeName);
    if (!entry) return notFound('Instance type');
    if (!state.locations.some((l) => l.code === location)) return invalid('unknown location_code');
    const capacity = (isSpot === true ? state.spotAvailability : state.availability).get(location);
    if (!capacity?.has(typeName)) return fail(503, 'service_unavailable', 'Not enough resources at the moment');
    const instance: FakeVerdaInstance = {
      id: randomUUID(),
      typeName,
      location,
      hostname,
      description: typeof description === 'string' ? description : '',
      image,
      tags,
      sshKeyIds: keyIds as string[],
      startupScriptId: typeof scriptId === 'string' ? scriptId : null,
      volumeIds: (volumes as string[] | undefined) ?? [],
      isSpot: isSpot === true,
      createdAt: Date.now(),
      status: null,
      ip: `203.0.113.${nextIp++ % 250}`,
    };
    state.instances.set(instance.id, instance);
    return newId(instance.id, 202);
  };

  const act = (body: unknown): Answer => {
    if (!isObject(body) || typeof body.action !== 'string') return invalid('action and id are required');
    const ids = typeof body.id === 'string' ? [body.id] : body.id;
    if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string' && UUID.test(id))) return invalid('id must be a uuid or a list of uuids');
    if (body.action !== 'delete') return invalid(`action ${body.action} is not supported by this fake`);
    if (state.refuseProvisioningDeletes && ids.some((id: string) => state.instances.has(id) && statusOf(state.instances.get(id)!) === 'provisioning')) {
      return invalid("Can't discontinue a provisioning instance");
    }
    const results = ids.map((id: string) => {
      const found = state.instances.delete(id);
      return { instanceId: id, action: 'delete', status: found ? 'success' : 'error', ...(found ? {} : { error: 'Invalid instance id', statusCode: 404 }) };
    });
    if (ids.length === 1) return results[0]!.status === 'success' ? ok(results, 202) : notFound('Instance');
    return ok(results, results.every((r) => r.status === 'success') ? 202 : 207);
  };

  const route = (method: string, path: string, query: URLSearchParams, body: unknown): Answer => {
    if (method === 'GET' && path === '/instance-types') return ok([...state.types.values()].map(typeWire));
    if (method === 'GET' && path === '/instance-availability') {
      const spot = (query.get('is_spot') ?? query.get('isSpot')) === 'true';
      const only = query.get('location_code') ?? query.get('locationCode');
      return ok(
        [...(spot ? state.spotAvailability : state.availability)]
          .filter(([code]) => !only || code === only)
          .map(([code, names]) => ({ location_code: code, availabilities: [...names] })),
      );
    }
    if (method === 'GET' && path === '/locations') return ok(state.locations);
    if (method === 'GET' && path === '/instances') return ok([...state.instances.values()].map(instanceWire));
    if (method === 'POST' && path === '/instances') return deploy(body);
    if (method === 'PUT' && path === '/instances') return act(body);
    const one = /^\/instances\/([^/]+)$/.exec(path);
    if (one && method === 'GET') {
      const instance = state.instances.get(decodeURIComponent(one[1]!));
      return instance ? ok(instanceWire(instance)) : notFound('Instance');
    }

    if (path === '/ssh-keys' && method === 'GET') return ok([...state.sshKeys.values()].map((k) => ({ ...k, fingerprint: null, created_by_user_id: null })));
    if (path === '/ssh-keys' && method === 'POST') {
      if (!isObject(body) || typeof body.name !== 'string' || typeof body.key !== 'string') return invalid('name and key are required');
      if (!/^(ssh-|ecdsa-)\S+ \S+/.test(body.key.trim())) return invalid('Invalid SSH key');
      const key = { id: randomUUID(), name: body.name, key: body.key };
      state.sshKeys.set(key.id, key);
      return newId(key.id, 201);
    }
    const keyPath = /^\/ssh-keys\/([^/]+)$/.exec(path);
    if (keyPath && method === 'DELETE') return state.sshKeys.delete(decodeURIComponent(keyPath[1]!)) ? ok(undefined) : notFound('SSH key');

    if (path === '/scripts' && method === 'POST') {
      if (!isObject(body) || typeof body.name !== 'string' || typeof body.script !== 'string') return invalid('name and script are required');
      const script = { id: randomUUID(), name: body.name, script: body.script, created_at: new Date().toISOString() };
      state.scripts.set(script.id, script);
      return newId(script.id, 201);
    }
    const scriptPath = /^\/scripts\/([^/]+)$/.exec(path);
    if (scriptPath) {
      const id = decodeURIComponent(scriptPath[1]!);
      const script = state.scripts.get(id);
      if (!script) return notFound('Script');
      if (method === 'GET') return ok(script);
      if (method === 'DELETE') {
        state.scripts.delete(id);
        return ok(undefined);
      }
    }

    if (path === '/volume-types' && method === 'GET') {
      return ok(
        ['NVMe', 'NVMe_Shared', 'HDD'].map((t) => ({
          type: t,
          price: { price_per_month_per_gb: t === 'HDD' ? 0.05 : state.volumePricePerGbMonth, cpu_price: 0, currency: 'usd' },
          is_shared_fs: t === 'NVMe_Shared',
          burst_bandwidth: 2000,
          continuous_bandwidth: 500,
          internal_network_speed: 100,
          iops: '100k',
          throughput_gbps: 2,
        })),
      );
    }
    if (path === '/volumes' && method === 'GET') return ok([...state.volumes.values()].map(volumeWire));
    if (path === '/volumes' && method === 'POST') {
      if (!isObject(body) || typeof body.type !== 'string' || typeof body.location_code !== 'string' || typeof body.size !== 'number' || typeof body.name !== 'string') {
        return invalid('type, location_code, size and name are required');
      }
      if (!state.locations.some((l) => l.code === body.location_code)) return invalid('unknown location_code');
      if (!Number.isInteger(body.size) || body.size < 1) return invalid('size must be a whole number of GB');
      const tags = tagsOf(body.tags);
      if (!tags) return invalid('invalid tags');
      const volume: FakeVerdaVolume = { id: randomUUID(), name: body.name, type: body.type, size: body.size, location: body.location_code, status: 'detached', tags, createdAt: new Date().toISOString() };
      state.volumes.set(volume.id, volume);
      return newId(volume.id, 202);
    }
    const volumePath = /^\/volumes\/([^/]+)$/.exec(path);
    if (volumePath) {
      const volume = state.volumes.get(decodeURIComponent(volumePath[1]!));
      if (!volume) return notFound('Volume');
      if (method === 'GET') return ok(volumeWire(volume));
      if (method === 'DELETE') {
        if (!isObject(body)) return invalid('body must be a JSON object');
        if (liveInstanceOf(volume.id)) return invalid('Volume is attached to an instance; detach it first');
        state.volumes.delete(volume.id);
        return ok(undefined, 202);
      }
    }
    return notFound(`${method} ${path}`);
  };

  const authorized = (header: string | undefined): boolean => {
    const match = /^Bearer\s+(\S+)$/i.exec(header ?? '');
    const until = match ? state.tokens.get(match[1]!) : undefined;
    return until !== undefined && state.now() < until;
  };

  const take = <T extends { remaining: number; path: string | null }>(list: T[], path: string): T | null => {
    const hit = list.find((f) => f.remaining > 0 && (f.path === null || path.includes(f.path)));
    if (hit) hit.remaining -= 1;
    return hit ?? null;
  };

  const answer = (res: ServerResponse, record: RecordedExchange, reply: Answer) => {
    record.status = reply.status;
    record.answer = reply.body;
    if (reply.body === undefined) {
      res.writeHead(reply.status);
      res.end();
      return;
    }
    res.writeHead(reply.status, { 'content-type': 'application/json' });
    res.end(reply.plain ? String(reply.body) : JSON.stringify(reply.body));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    let badJson = false;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch {
        badJson = true;
      }
    }
    const url = new URL(req.url ?? '/', 'http://fake');
    const record: RecordedExchange = { method: req.method ?? 'GET', path: url.pathname, query: Object.fromEntries(url.searchParams), headers: { ...req.headers }, body, status: null, answer: undefined };
    state.exchanges.push(record);
    if (!url.pathname.startsWith(`${PREFIX}/`)) return answer(res, record, notFound(url.pathname));
    const path = url.pathname.slice(PREFIX.length);

    const fault = take(faults, path);
    if (fault) {
      const code = fault.code ?? (fault.status === 429 ? 'rate_limit_exceeded' : fault.status === 503 ? 'service_unavailable' : 'server_error');
      return answer(res, record, fail(fault.status, code, 'Injected failure'));
    }
    if (badJson) return answer(res, record, invalid('Request body is not valid JSON'));
    if (record.method === 'POST' && path === '/oauth2/token') return answer(res, record, token(body));
    if (!authorized(req.headers.authorization)) return answer(res, record, fail(401, 'unauthorized_request', 'Invalid or expired access token'));

    const reply = route(record.method, path, url.searchParams, body);
    if (take(hangs, path)) {
      hanging.add(res);
      res.on('close', () => hanging.delete(res));
      return;
    }
    answer(res, record, reply);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ code: 'server_error', message: String(error) }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${PREFIX}`,
    state,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
