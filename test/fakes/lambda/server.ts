import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for the Lambda Cloud API v1 (OpenAPI 1.10.0 shapes): the `{data}` / `{error:{code,
 * message, suggestion}}` envelope, Bearer or Basic auth, instance types as a map keyed by type name,
 * launch / terminate / restart by instance-operations, SSH keys, and the documented error codes.
 */

export interface FakeRegion {
  name: string;
  description: string;
}

export interface FakeInstanceType {
  name: string;
  description: string;
  gpu_description: string;
  price_cents_per_hour: number;
  specs: { vcpus: number; memory_gib: number; storage_gib: number; gpus: number };
}

export interface FakeSshKey {
  id: string;
  name: string;
  public_key: string;
}

/** A filesystem (Lambda's persistent storage): no size of its own, billed on bytes used. */
export interface FakeFileSystem {
  id: string;
  name: string;
  region: string;
  created: string;
  bytesUsed: number;
}

export interface FakeInstance {
  id: string;
  name: string | null;
  hostname: string | null;
  region: string;
  typeName: string;
  sshKeyNames: string[];
  tags: { key: string; value: string }[];
  image: unknown;
  /** Filesystems mounted at launch, by name. */
  fileSystemNames: string[];
  /** cloud-init user data as sent. */
  userData: string | null;
  createdAt: number;
  /** Set to force a status; otherwise booting until bootMs has passed, then active. */
  status: string | null;
  ip: string;
  restarts: number;
}

export interface RecordedRequest {
  method: string;
  /** Path without the /api/v1 prefix, e.g. "/instance-operations/launch". */
  path: string;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  at: number;
  /** The status answered, or null for a request left hanging. */
  status: number | null;
}

interface Fault {
  remaining: number;
  status: number;
  path: string | null;
  code: string | null;
}

interface Hang {
  remaining: number;
  path: string | null;
}

export interface FakeLambdaState {
  apiKey: string;
  regions: Map<string, FakeRegion>;
  /** Instance types by name, with the regions that have capacity now (empty = none anywhere). */
  catalog: Map<string, { type: FakeInstanceType; capacity: string[] }>;
  instances: Map<string, FakeInstance>;
  sshKeys: Map<string, FakeSshKey>;
  fileSystems: Map<string, FakeFileSystem>;
  requests: RecordedRequest[];
  /** Added to every answer. */
  latencyMs: number;
  /** How long a new instance stays "booting". */
  bootMs: number;
  /** When > 0, the fake itself answers 429 to requests closer together than this (as Lambda does at ~1/s). */
  rateLimitMs: number;
  /** Likewise for launches (Lambda: 1 per 12 s). */
  launchRateLimitMs: number;
  /** The next `count` requests (whose path contains `path`, if given) answer `status` instead. */
  failNext(count: number, status: number, options?: { path?: string; code?: string }): void;
  /** The next `count` matching requests are carried out, but their answer never comes (a lost response). */
  hangNext(count: number, path?: string): void;
  setCapacity(typeName: string, regions: string[]): void;
  requestsTo(method: string, path: string): RecordedRequest[];
}

export interface FakeLambda {
  /** Base URL including /api/v1, as the adapter's baseUrl. */
  url: string;
  state: FakeLambdaState;
  close(): Promise<void>;
}

const REGIONS: FakeRegion[] = [
  { name: 'us-east-1', description: 'Virginia, USA' },
  { name: 'us-west-1', description: 'California, USA' },
  { name: 'us-west-2', description: 'Arizona, USA' },
  { name: 'us-south-1', description: 'Texas, USA' },
  { name: 'us-midwest-1', description: 'Illinois, USA' },
  { name: 'europe-central-1', description: 'Frankfurt, Germany' },
  { name: 'asia-northeast-1', description: 'Tokyo, Japan' },
  { name: 'asia-south-1', description: 'Hyderabad, India' },
  { name: 'me-west-1', description: 'Tel Aviv, Israel' },
];

const type = (
  name: string,
  gpus: number,
  gpu: string,
  cents: number,
  vcpus: number,
  memory: number,
  storage: number,
  capacity: string[],
): { type: FakeInstanceType; capacity: string[] } => ({
  type: {
    name,
    description: `${gpus}x ${gpu}`,
    gpu_description: gpu.replace(/^Tesla /, ''),
    price_cents_per_hour: cents,
    specs: { vcpus, memory_gib: memory, storage_gib: storage, gpus },
  },
  capacity,
});

/** 14 types, 19 type-in-region offers with capacity, two types with none. Prices are invented. */
const CATALOG = [
  type('gpu_1x_gh200', 1, 'GH200 (96 GB)', 149, 64, 432, 4096, ['us-east-1', 'us-west-1']),
  type('gpu_1x_h100_pcie', 1, 'H100 (80 GB PCIe)', 249, 26, 200, 1024, ['us-west-1', 'us-south-1']),
  type('gpu_1x_h100_sxm5', 1, 'H100 (80 GB SXM5)', 329, 26, 225, 2867, ['us-east-1']),
  type('gpu_2x_h100_sxm5', 2, 'H100 (80 GB SXM5)', 638, 52, 450, 5734, []),
  type('gpu_8x_h100_sxm5', 8, 'H100 (80 GB SXM5)', 2392, 208, 1800, 22528, ['us-west-2', 'europe-central-1']),
  type('gpu_1x_a100_sxm4', 1, 'A100 (40 GB SXM4)', 129, 30, 200, 512, ['us-east-1', 'asia-northeast-1']),
  type('gpu_8x_a100_80gb_sxm4', 8, 'A100 (80 GB SXM4)', 1432, 240, 1800, 20480, ['us-midwest-1']),
  type('gpu_1x_a10', 1, 'A10 (24 GB PCIe)', 75, 30, 200, 1400, ['us-west-1', 'us-east-1', 'europe-central-1']),
  type('gpu_1x_a6000', 1, 'A6000 (48 GB)', 80, 14, 46, 512, ['us-south-1']),
  type('gpu_2x_a6000', 2, 'A6000 (48 GB)', 160, 28, 92, 1024, ['us-south-1', 'me-west-1']),
  type('gpu_4x_a6000', 4, 'A6000 (48 GB)', 320, 56, 184, 2048, []),
  type('gpu_1x_rtx6000', 1, 'RTX 6000 (24 GB)', 50, 14, 46, 512, ['asia-south-1']),
  type('gpu_8x_v100', 8, 'Tesla V100 (16 GB)', 440, 88, 448, 5836, ['us-east-1']),
  type('gpu_8x_b200_sxm6', 8, 'B200 (180 GB SXM6)', 4792, 208, 2900, 22000, ['us-west-2']),
];

const hex32 = (): string => randomBytes(16).toString('hex');

class HttpAnswer {
  readonly status: number;
  readonly body: unknown;

  constructor(status: number, body: unknown) {
    this.status = status;
    this.body = body;
  }
}

const ok = (data: unknown) => new HttpAnswer(200, { data });
const fail = (status: number, code: string, message: string, suggestion?: string) =>
  new HttpAnswer(status, { error: { code, message, ...(suggestion ? { suggestion } : {}) } });
const invalid = (message: string) => fail(400, 'global/invalid-parameters', message);
const instanceMissing = () => fail(404, 'global/object-does-not-exist', 'Specified instance does not exist.');

const PREFIX = '/api/v1';
const FILE_SYSTEM_NAME = /^[a-zA-Z]+[0-9a-zA-Z-]*$/;
const USER_DATA_MAX = 1024 * 1024;
const TAG_KEY = /^[a-z][a-z0-9-:]+$/;
const HOSTNAME = /^[a-z0-9][0-9a-z-]{0,62}$/;

export async function startFakeLambda(options: { apiKey?: string } = {}): Promise<FakeLambda> {
  const faults: Fault[] = [];
  const hangs: Hang[] = [];
  const hanging = new Set<ServerResponse>();
  let lastRequestAt = -Infinity;
  let lastLaunchAt = -Infinity;
  let nextIp = 10;

  const state: FakeLambdaState = {
    apiKey: options.apiKey ?? 'secret_fake-lambda-key',
    regions: new Map(REGIONS.map((r) => [r.name, { ...r }])),
    catalog: new Map(CATALOG.map((e) => [e.type.name, { type: { ...e.type, specs: { ...e.type.specs } }, capacity: [...e.capacity] }])),
    instances: new Map(),
    sshKeys: new Map(),
    fileSystems: new Map(),
    requests: [],
    latencyMs: 0,
    bootMs: 50,
    rateLimitMs: 0,
    launchRateLimitMs: 0,
    failNext(count, status, opts = {}) {
      faults.push({ remaining: count, status, path: opts.path ?? null, code: opts.code ?? null });
    },
    hangNext(count, path) {
      hangs.push({ remaining: count, path: path ?? null });
    },
    setCapacity(typeName, regions) {
      const entry = state.catalog.get(typeName);
      if (!entry) throw new Error(`no such type ${typeName}`);
      entry.capacity = [...regions];
    },
    requestsTo(method, path) {
      return state.requests.filter((r) => r.method === method && r.path === path);
    },
  };

  const statusOf = (instance: FakeInstance): string =>
    instance.status ?? (Date.now() - instance.createdAt >= state.bootMs ? 'active' : 'booting');

  const regionWire = (name: string) => state.regions.get(name) ?? { name, description: name };

  const instanceWire = (instance: FakeInstance, status = statusOf(instance)) => {
    const entry = state.catalog.get(instance.typeName)!;
    const up = status === 'active' || status === 'unhealthy';
    const action = (available: boolean) =>
      available ? { available } : { available, reason_code: 'not-running', reason_description: 'Instance is not running.' };
    return {
      id: instance.id,
      ...(instance.name !== null ? { name: instance.name } : {}),
      // no ip while booting
      ...(up ? { ip: instance.ip, private_ip: `10.0.2.${instance.ip.split('.').pop()}` } : {}),
      status,
      ssh_key_names: [...instance.sshKeyNames],
      file_system_names: [...instance.fileSystemNames],
      file_system_mounts: instance.fileSystemNames.map((name) => {
        const fs = [...state.fileSystems.values()].find((f) => f.name === name);
        return { mount_point: `/lambda/nfs/${name}`, file_system_id: fs?.id ?? '' };
      }),
      region: regionWire(instance.region),
      instance_type: entry.type,
      hostname: instance.hostname ?? (up ? instance.ip : ''),
      jupyter_token: instance.id.slice(0, 16),
      jupyter_url: `https://jupyter-${instance.id}.lambdaspaces.example/?token=${instance.id.slice(0, 16)}`,
      is_reserved: false,
      actions: {
        migrate: action(false),
        rebuild: action(up),
        restart: action(status === 'active'),
        cold_reboot: action(up),
        terminate: action(true),
      },
      tags: instance.tags.map((t) => ({ ...t })),
      firewall_rulesets: [],
    };
  };

  /** Mounted on an instance that still exists (terminated ones are removed at once). */
  const inUse = (fs: FakeFileSystem): boolean => [...state.instances.values()].some((i) => i.fileSystemNames.includes(fs.name));

  const fileSystemWire = (fs: FakeFileSystem) => ({
    id: fs.id,
    name: fs.name,
    mount_point: `/lambda/nfs/${fs.name}`,
    created: fs.created,
    created_by: { id: 'usr_fake', email: 'owner@example.com', status: 'active' },
    is_in_use: inUse(fs),
    region: regionWire(fs.region),
    bytes_used: fs.bytesUsed,
  });

  const authorized = (header: string | undefined): boolean => {
    if (!header) return false;
    const [scheme, value = ''] = header.split(/\s+/, 2);
    if (scheme?.toLowerCase() === 'bearer') return value === state.apiKey;
    if (scheme?.toLowerCase() === 'basic') {
      // "<base64 of key:>" or the raw key, both documented
      if (value === state.apiKey) return true;
      const decoded = Buffer.from(value, 'base64').toString('utf8');
      return decoded === `${state.apiKey}:` || decoded === state.apiKey;
    }
    return false;
  };

  const isObject = (value: unknown): value is Record<string, unknown> =>
    typeof value === 'object' && value !== null && !Array.isArray(value);

  const instanceIdsOf = (body: unknown): string[] | HttpAnswer => {
    if (!isObject(body) || !Array.isArray(body.instance_ids) || !body.instance_ids.every((id) => typeof id === 'string')) {
      return invalid('instance_ids must be an array of strings');
    }
    return body.instance_ids as string[];
  };

  const launch = (body: unknown): HttpAnswer => {
    if (!isObject(body)) return invalid('Request body must be a JSON object.');
    const { region_name: region, instance_type_name: typeName, ssh_key_names: keys, name, hostname, tags } = body;
    const { file_system_names: fileSystemNames, user_data: userData } = body;
    if (typeof region !== 'string' || typeof typeName !== 'string') {
      return invalid('region_name and instance_type_name are required.');
    }
    if (!Array.isArray(keys) || keys.length !== 1 || typeof keys[0] !== 'string') {
      return invalid('Exactly one SSH key must be specified.');
    }
    if (name !== undefined && (typeof name !== 'string' || name.length > 64)) return invalid('name must be 64 characters or fewer.');
    if (hostname !== undefined && (typeof hostname !== 'string' || !HOSTNAME.test(hostname))) return invalid('Invalid hostname.');
    if (tags !== undefined) {
      const good =
        Array.isArray(tags) &&
        tags.every(
          (t) =>
            isObject(t) && typeof t.key === 'string' && t.key.length <= 55 && TAG_KEY.test(t.key) &&
            typeof t.value === 'string' && t.value.length <= 128,
        );
      if (!good) return invalid('Invalid tags.');
    }
    if (fileSystemNames !== undefined && (!Array.isArray(fileSystemNames) || !fileSystemNames.every((n) => typeof n === 'string'))) {
      return invalid('file_system_names must be an array of strings.');
    }
    if (userData !== undefined && (typeof userData !== 'string' || Buffer.byteLength(userData) > USER_DATA_MAX)) {
      return invalid('user_data must be plain text of at most 1 MB.');
    }
    const entry = state.catalog.get(typeName);
    if (!entry) return fail(404, 'global/object-does-not-exist', 'Instance type does not exist.');
    if (!state.regions.has(region)) return invalid('Invalid region name.');
    for (const fsName of (fileSystemNames as string[] | undefined) ?? []) {
      const fs = [...state.fileSystems.values()].find((f) => f.name === fsName);
      if (!fs) return fail(404, 'global/object-does-not-exist', `Specified filesystem '${fsName}' does not exist.`);
      if (fs.region !== region) {
        return fail(400, 'instance-operations/launch/file-system-in-wrong-region', `Filesystem '${fsName}' is in ${fs.region}, not ${region}.`);
      }
    }
    const key = [...state.sshKeys.values()].find((k) => k.name === keys[0]);
    if (!key) return fail(404, 'global/object-does-not-exist', 'Specified SSH key does not exist.');
    if (!entry.capacity.includes(region)) {
      return fail(400, 'instance-operations/launch/insufficient-capacity', 'Not enough capacity to fulfill launch request.', 'Choose a different region or instance type.');
    }
    const instance: FakeInstance = {
      id: hex32(),
      name: typeof name === 'string' ? name : null,
      hostname: typeof hostname === 'string' ? hostname : null,
      region,
      typeName,
      sshKeyNames: [keys[0]],
      tags: Array.isArray(tags) ? (tags as { key: string; value: string }[]).map((t) => ({ key: t.key, value: t.value })) : [],
      image: body.image ?? null,
      fileSystemNames: [...new Set((fileSystemNames as string[] | undefined) ?? [])],
      userData: typeof userData === 'string' ? userData : null,
      createdAt: Date.now(),
      status: null,
      ip: `198.51.100.${nextIp++ % 250}`,
      restarts: 0,
    };
    state.instances.set(instance.id, instance);
    return ok({ instance_ids: [instance.id] });
  };

  const route = (method: string, path: string, body: unknown): HttpAnswer => {
    if (method === 'GET' && path === '/instance-types') {
      // the quirk: an object keyed by type name, not an array
      const data: Record<string, unknown> = {};
      for (const [name, entry] of state.catalog) {
        data[name] = { instance_type: entry.type, regions_with_capacity_available: entry.capacity.map(regionWire) };
      }
      return ok(data);
    }
    if (method === 'GET' && path === '/regions') return ok([...state.regions.values()]);
    if (method === 'GET' && path === '/instances') return ok([...state.instances.values()].map((i) => instanceWire(i)));

    const one = /^\/instances\/([^/]+)$/.exec(path);
    if (one) {
      const instance = state.instances.get(decodeURIComponent(one[1]!));
      if (!instance) return instanceMissing();
      if (method === 'GET') return ok(instanceWire(instance));
      if (method === 'POST') {
        if (!isObject(body) || typeof body.name !== 'string' || body.name.length > 64) return invalid('Invalid name.');
        instance.name = body.name;
        return ok(instanceWire(instance));
      }
    }

    if (method === 'POST' && path === '/instance-operations/launch') return launch(body);

    if (method === 'POST' && (path === '/instance-operations/terminate' || path === '/instance-operations/restart')) {
      const ids = instanceIdsOf(body);
      if (ids instanceof HttpAnswer) return ids;
      const found = ids.map((id) => state.instances.get(id));
      if (found.some((i) => i === undefined)) return instanceMissing();
      const instances = found as FakeInstance[];
      if (path.endsWith('/terminate')) {
        // gone at once: a second terminate meets 404 global/object-does-not-exist
        for (const i of instances) state.instances.delete(i.id);
        return ok({ terminated_instances: instances.map((i) => instanceWire(i, 'terminating')) });
      }
      if (instances.some((i) => statusOf(i) !== 'active')) {
        return fail(409, 'global/conflict', 'Instance is not in a state that allows restart.');
      }
      for (const i of instances) i.restarts += 1;
      return ok({ restarted_instances: instances.map((i) => instanceWire(i)) });
    }

    if (path === '/ssh-keys' && method === 'GET') return ok([...state.sshKeys.values()]);
    if (path === '/ssh-keys' && method === 'POST') {
      if (!isObject(body) || typeof body.name !== 'string' || body.name.length < 1 || body.name.length > 64) {
        return invalid('name must be 1 to 64 characters.');
      }
      if ([...state.sshKeys.values()].some((k) => k.name === body.name)) return invalid('SSH key name already in use.');
      const generated = body.public_key === undefined;
      if (!generated && (typeof body.public_key !== 'string' || !/^(ssh-|ecdsa-)\S+ \S+/.test(body.public_key))) {
        return invalid('Invalid public key.');
      }
      const key: FakeSshKey = {
        id: hex32(),
        name: body.name,
        public_key: generated ? `ssh-ed25519 AAAAFAKE${hex32()} generated` : (body.public_key as string),
      };
      state.sshKeys.set(key.id, key);
      return ok(generated ? { ...key, private_key: '-----BEGIN OPENSSH PRIVATE KEY-----\nfake\n-----END OPENSSH PRIVATE KEY-----\n' } : key);
    }
    if (path === '/file-systems' && method === 'GET') return ok([...state.fileSystems.values()].map(fileSystemWire));
    if (path === '/filesystems' && method === 'POST') {
      if (!isObject(body) || typeof body.name !== 'string' || body.name.length < 1 || body.name.length > 60 || !FILE_SYSTEM_NAME.test(body.name)) {
        return invalid('name must be 1 to 60 letters, digits and hyphens, starting with a letter.');
      }
      if (typeof body.region !== 'string' || !state.regions.has(body.region)) return invalid('Invalid region name.');
      if ([...state.fileSystems.values()].some((f) => f.name === body.name)) return fail(400, 'global/duplicate', 'A filesystem with this name already exists.');
      const fs: FakeFileSystem = { id: hex32(), name: body.name, region: body.region, created: new Date().toISOString(), bytesUsed: 0 };
      state.fileSystems.set(fs.id, fs);
      return ok(fileSystemWire(fs));
    }
    const fsPath = /^\/filesystems\/([^/]+)$/.exec(path);
    if (fsPath && method === 'DELETE') {
      const fs = state.fileSystems.get(decodeURIComponent(fsPath[1]!));
      if (!fs) return fail(404, 'global/object-does-not-exist', 'Filesystem was not found.');
      if (inUse(fs)) return fail(400, 'filesystems/filesystem-in-use', 'Filesystem is mounted to an instance and cannot be deleted.');
      state.fileSystems.delete(fs.id);
      return ok({ deleted_ids: [fs.id] });
    }
    const keyPath = /^\/ssh-keys\/([^/]+)$/.exec(path);
    if (keyPath && method === 'DELETE') {
      if (!state.sshKeys.delete(decodeURIComponent(keyPath[1]!))) return fail(404, 'global/not-found', 'SSH key not found.');
      return ok({});
    }
    return fail(404, 'global/not-found', `No route for ${method} ${path}.`);
  };

  const take = <T extends { remaining: number; path: string | null }>(list: T[], path: string): T | null => {
    const hit = list.find((f) => f.remaining > 0 && (f.path === null || path.includes(f.path)));
    if (hit) hit.remaining -= 1;
    return hit ?? null;
  };

  const answer = (res: ServerResponse, record: RecordedRequest, reply: HttpAnswer) => {
    record.status = reply.status;
    res.writeHead(reply.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(reply.body));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown = undefined;
    let badJson = false;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch {
        badJson = true;
      }
    }
    const url = new URL(req.url ?? '/', 'http://fake');
    const path = url.pathname.startsWith(PREFIX) ? url.pathname.slice(PREFIX.length) : url.pathname;
    const record: RecordedRequest = {
      method: req.method ?? 'GET',
      path,
      query: Object.fromEntries(url.searchParams),
      headers: { ...req.headers },
      body,
      at: Date.now(),
      status: null,
    };
    state.requests.push(record);

    if (state.latencyMs > 0) await new Promise((r) => setTimeout(r, state.latencyMs));

    const fault = take(faults, path);
    if (fault) {
      const code = fault.code ?? (fault.status === 429 ? 'global/rate-limited' : 'global/internal-error');
      return answer(res, record, fail(fault.status, code, fault.status === 429 ? 'Too many requests.' : 'Injected failure.'));
    }
    if (!authorized(req.headers.authorization)) {
      return answer(res, record, fail(401, 'global/invalid-api-key', 'API key was invalid, expired, or deleted.', 'Check your API key or create a new one, then try again.'));
    }
    // Lambda's 429 body is not documented; this envelope is a guess in its usual style.
    const now = record.at;
    if (state.rateLimitMs > 0 && now - lastRequestAt < state.rateLimitMs) {
      return answer(res, record, fail(429, 'global/rate-limited', 'Too many requests.'));
    }
    lastRequestAt = now;
    const isLaunch = record.method === 'POST' && path === '/instance-operations/launch';
    if (isLaunch && state.launchRateLimitMs > 0 && now - lastLaunchAt < state.launchRateLimitMs) {
      return answer(res, record, fail(429, 'global/rate-limited', 'Too many launch requests.'));
    }
    if (isLaunch) lastLaunchAt = now;
    if (badJson) return answer(res, record, invalid('Request body is not valid JSON.'));

    const reply = route(record.method, path, body);
    if (take(hangs, path)) {
      // carried out, but the answer is lost: the client only sees its own timeout
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
        res.end(JSON.stringify({ error: { code: 'global/internal-error', message: String(error) } }));
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
