import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RecordedExchange } from '../../support/provider-description.ts';

/**
 * A local stand-in for Hyperstack's Infrahub API v1 (NexGen Cloud), written from its OpenAPI description
 * (`api/openapi.yaml` of NexGenCloud/hyperstack-sdk-go; as JSON, hyperstack-openapi.json among the provider descriptions (test/support/provider-description.ts), and
 * test/contract/providers/hyperstack-description.test.ts holds every exchange to it):
 * - the `api_key` header; answers `{status: true, message, ...}`, errors `{status: false, message, error_reason}`;
 * - flavors grouped by GPU and region with `stock_available`; the pricebook priced per GPU and hour;
 * - environments (one region each) that hold key pairs, volumes and machines: a machine is made in an environment,
 *   with a key pair of that environment by name, and a volume of it by name;
 * - a machine is CREATING until `bootMs` has passed, then ACTIVE with its floating IP ATTACHED;
 * - a delete while it is still CREATING is refused (400), as Hyperstack does; a volume attached cannot be deleted.
 * Where the description is silent the fake chooses, and says so: a flavor out of stock refuses a create with 400
 * `out_of_stock`; a deleted machine is gone at once (404).
 */

export interface FakeHyperstackFlavor {
  id: number;
  name: string;
  gpu: string;
  gpu_count: number;
  cpu: number;
  ram: number;
  disk: number;
  ephemeral: number;
  region_name: string;
  stock_available: boolean;
}

export interface FakeHyperstackVm {
  id: number;
  name: string;
  environment: string;
  flavor: string;
  image: string;
  keyName: string;
  labels: string[];
  userData: string | null;
  volumeName: string | null;
  assignFloatingIp: boolean;
  portRandomization: boolean;
  createdAt: number;
  status: string | null;
  floatingIp: string;
  hardReboots: number;
}

export interface FakeHyperstackVolume {
  id: number;
  name: string;
  environment: string;
  size: number;
  volumeType: string;
  description: string;
}

export interface FakeHyperstackState {
  apiKey: string;
  regions: { id: number; name: string; country: string }[];
  flavors: FakeHyperstackFlavor[];
  /** GPU name → USD per GPU and hour. */
  pricebook: Map<string, number>;
  environments: Map<string, { id: number; name: string; region: string; created_at: string }>;
  keypairs: { id: number; name: string; environment: string; public_key: string }[];
  vms: Map<number, FakeHyperstackVm>;
  volumes: Map<number, FakeHyperstackVolume>;
  exchanges: RecordedExchange[];
  bootMs: number;
  /** The next `count` requests (of `method` and whose path contains `path`, if given) answer `status` with `message`. */
  failNext(count: number, status: number, options?: { path?: string; method?: string; message?: string }): void;
  exchangesTo(method: string, path: string): RecordedExchange[];
}

export interface FakeHyperstack {
  /** Base URL including /v1. */
  url: string;
  state: FakeHyperstackState;
  close(): Promise<void>;
}

let serial = 100;
const flavor = (name: string, gpu: string, count: number, region: string, stock: boolean, cpu: number, ram: number): FakeHyperstackFlavor => ({
  id: serial++,
  name,
  gpu,
  gpu_count: count,
  cpu,
  ram,
  disk: 100,
  ephemeral: count * 750,
  region_name: region,
  stock_available: stock,
});

/** Names follow Hyperstack's ("n3-A100x1"); prices are invented. */
const FLAVORS = (): FakeHyperstackFlavor[] => [
  flavor('n3-A100x1', 'A100-80G-PCIe', 1, 'CANADA-1', true, 28, 120),
  flavor('n3-A100x8', 'A100-80G-PCIe', 8, 'CANADA-1', true, 252, 960),
  flavor('n3-H100x1', 'H100-80G-PCIe', 1, 'CANADA-1', true, 28, 180),
  flavor('n3-H100x1', 'H100-80G-PCIe', 1, 'NORWAY-1', false, 28, 180),
  flavor('n3-RTX-A6000x1', 'RTX-A6000', 1, 'NORWAY-1', true, 28, 58),
  flavor('n3-L40x2', 'L40', 2, 'NORWAY-1', true, 56, 116),
  flavor('n1-cpu-small', '', 0, 'CANADA-1', true, 4, 8),
];

const PRICES: [string, number][] = [
  ['A100-80G-PCIe', 1.35],
  ['H100-80G-PCIe', 1.9],
  ['RTX-A6000', 0.5],
  ['L40', 1],
  ['Cloud-SSD', 0.000082],
];

class Answer {
  readonly status: number;
  readonly body: unknown;

  constructor(status: number, body: unknown) {
    this.status = status;
    this.body = body;
  }
}

const ok = (fields: Record<string, unknown> = {}) => new Answer(200, { status: true, message: 'Success', ...fields });
const fail = (status: number, message: string, reason: string) => new Answer(status, { status: false, message, error_reason: reason });
const invalid = (message: string) => fail(400, message, 'bad_request');
const notFound = (what: string) => fail(404, `${what} not found`, 'not_found');

const isObject = (value: unknown): value is Record<string, any> => typeof value === 'object' && value !== null && !Array.isArray(value);
const PREFIX = '/v1';

export async function startFakeHyperstack(): Promise<FakeHyperstack> {
  const faults: { remaining: number; status: number; path: string | null; method: string | null; message: string }[] = [];
  let nextId = 1;
  const state: FakeHyperstackState = {
    apiKey: 'fake-hyperstack-key',
    regions: [
      { id: 1, name: 'CANADA-1', country: 'Canada' },
      { id: 2, name: 'NORWAY-1', country: 'Norway' },
    ],
    flavors: FLAVORS(),
    pricebook: new Map(PRICES),
    environments: new Map(),
    keypairs: [],
    vms: new Map(),
    volumes: new Map(),
    exchanges: [],
    bootMs: 50,
    failNext(count, status, opts = {}) {
      faults.push({ remaining: count, status, path: opts.path ?? null, method: opts.method ?? null, message: opts.message ?? 'Injected failure' });
    },
    exchangesTo(method, path) {
      return state.exchanges.filter((e) => e.method === method && e.path === `${PREFIX}${path}`);
    },
  };

  const statusOf = (vm: FakeHyperstackVm) => vm.status ?? (Date.now() - vm.createdAt >= state.bootMs ? 'ACTIVE' : 'CREATING');
  const regionOf = (environment: string) => state.environments.get(environment)?.region ?? '';
  const holderOf = (volume: FakeHyperstackVolume) => [...state.vms.values()].find((vm) => vm.volumeName === volume.name && vm.environment === volume.environment);

  const environmentWire = (e: { id: number; name: string; region: string; created_at: string }) => ({ id: e.id, name: e.name, region: e.region, created_at: e.created_at, features: { green_status: 'GREEN', network_optimised: true } });

  const vmWire = (vm: FakeHyperstackVm) => {
    const status = statusOf(vm);
    const f = state.flavors.find((x) => x.name === vm.flavor && x.region_name === regionOf(vm.environment))!;
    const volume = vm.volumeName ? [...state.volumes.values()].find((v) => v.name === vm.volumeName && v.environment === vm.environment) : undefined;
    return {
      id: vm.id,
      name: vm.name,
      status,
      power_state: status === 'ACTIVE' ? 'RUNNING' : 'NOSTATE',
      vm_state: status === 'ACTIVE' ? 'active' : 'building',
      fixed_ip: `10.0.0.${vm.id % 250}`,
      floating_ip: status === 'ACTIVE' && vm.assignFloatingIp ? vm.floatingIp : '',
      floating_ip_status: status === 'ACTIVE' && vm.assignFloatingIp ? 'ATTACHED' : 'ATTACHING',
      port_randomization: vm.portRandomization,
      port_randomization_status: vm.portRandomization ? 'ENABLED' : 'DISABLED',
      requires_public_ip: vm.assignFloatingIp,
      locked: false,
      contract_id: 0,
      created_at: new Date(vm.createdAt).toISOString(),
      os: vm.image,
      image: { name: vm.image },
      keypair: { name: vm.keyName },
      labels: [...vm.labels],
      environment: { id: state.environments.get(vm.environment)!.id, name: vm.environment, org_id: 1, region: regionOf(vm.environment), features: { green_status: 'GREEN', network_optimised: true } },
      flavor: { id: f.id, name: f.name, gpu: f.gpu, gpu_count: f.gpu_count, cpu: f.cpu, ram: f.ram, disk: f.disk, ephemeral: f.ephemeral, labels: [], features: {} },
      volume_attachments: volume ? [{ id: volume.id + 1000, device: '/dev/vdb', status: 'ATTACHED', protected: false, created_at: new Date(vm.createdAt).toISOString(), volume: { id: volume.id, name: volume.name, size: volume.size, volume_type: volume.volumeType, bootable: false } }] : [],
      security_rules: [],
      features: {},
    };
  };

  const volumeWire = (v: FakeHyperstackVolume) => {
    const holder = holderOf(v);
    return {
      id: v.id,
      name: v.name,
      description: v.description,
      size: v.size,
      volume_type: v.volumeType,
      bootable: false,
      status: holder ? 'in-use' : 'available',
      environment: { name: v.environment, region: regionOf(v.environment), features: {} },
      attachments: holder ? [{ id: v.id + 1000, instance_id: holder.id, device: '/dev/vdb', status: 'ATTACHED', protected: false }] : [],
      created_at: new Date().toISOString(),
      updated_at: new Date().toISOString(),
    };
  };

  const page = <T>(items: T[], query: URLSearchParams) => {
    const size = Number(query.get('pageSize') ?? query.get('per_page') ?? 50);
    const at = Number(query.get('page') ?? 1);
    return { items: items.slice((at - 1) * size, at * size), count: items.length, page: at, page_size: size };
  };

  const createVm = (body: unknown): Answer => {
    if (!isObject(body)) return invalid('body must be a JSON object');
    const { name, environment_name: environment, flavor_name: flavorName, image_name: image, key_name: keyName, count } = body;
    if (typeof name !== 'string' || name.length > 50 || typeof environment !== 'string' || typeof flavorName !== 'string' || typeof keyName !== 'string' || count !== 1) {
      return invalid('name (at most 50), environment_name, flavor_name, key_name and count 1 are required');
    }
    const env = state.environments.get(environment);
    if (!env) return notFound('Environment');
    const f = state.flavors.find((x) => x.name === flavorName && x.region_name === env.region);
    if (!f) return notFound('Flavor');
    if (!state.keypairs.some((k) => k.name === keyName && k.environment === environment)) return notFound('Keypair');
    if (body.labels !== undefined && (!Array.isArray(body.labels) || !body.labels.every((l) => typeof l === 'string'))) return invalid('labels must be strings');
    if (body.user_data !== undefined && typeof body.user_data !== 'string') return invalid('user_data must be a string');
    const volumeName = body.volume_name;
    if (volumeName !== undefined) {
      const volume = [...state.volumes.values()].find((v) => v.name === volumeName && v.environment === environment);
      if (!volume) return notFound('Volume');
      if (holderOf(volume)) return invalid('Volume is already attached');
    }
    if (!f.stock_available) return fail(400, `No stock available for ${flavorName} in ${env.region}`, 'out_of_stock');
    const vm: FakeHyperstackVm = {
      id: nextId++,
      name,
      environment,
      flavor: flavorName,
      image: typeof image === 'string' ? image : 'Ubuntu Server 22.04 LTS',
      keyName,
      labels: (body.labels as string[] | undefined) ?? [],
      userData: (body.user_data as string | undefined) ?? null,
      volumeName: typeof volumeName === 'string' ? volumeName : null,
      assignFloatingIp: body.assign_floating_ip === true,
      portRandomization: body.enable_port_randomization !== false,
      createdAt: Date.now(),
      status: null,
      floatingIp: `192.0.2.${(nextId % 250) + 1}`,
      hardReboots: 0,
    };
    state.vms.set(vm.id, vm);
    return ok({ instances: [vmWire(vm)] });
  };

  const route = (method: string, path: string, query: URLSearchParams, body: unknown): Answer => {
    if (method === 'GET' && path === '/core/flavors') {
      const groups = new Map<string, FakeHyperstackFlavor[]>();
      for (const f of state.flavors) groups.set(`${f.gpu}|${f.region_name}`, [...(groups.get(`${f.gpu}|${f.region_name}`) ?? []), f]);
      return ok({
        data: [...groups.entries()].map(([key, flavors]) => ({
          gpu: key.split('|')[0],
          region_name: key.split('|')[1],
          flavors: flavors.map((f) => ({ ...f, display_name: f.name, labels: [], features: {}, created_at: '2026-01-01T00:00:00.000Z' })),
        })),
      });
    }
    if (method === 'GET' && path === '/pricebook') {
      return new Answer(200, [...state.pricebook].map(([name, value], index) => ({ id: index + 1, name, value, original_value: value, discount_applied: false })));
    }
    if (method === 'GET' && path === '/core/regions') return ok({ regions: state.regions.map((r) => ({ ...r, green_status: 'GREEN', features: {} })) });

    if (path === '/core/environments' && method === 'GET') {
      const search = query.get('search');
      const found = [...state.environments.values()].filter((e) => !search || e.name.includes(search));
      const { items, ...paging } = page(found, query);
      return ok({ environments: items.map(environmentWire), ...paging });
    }
    if (path === '/core/environments' && method === 'POST') {
      if (!isObject(body) || typeof body.name !== 'string' || body.name.length > 50 || typeof body.region !== 'string') return invalid('name (at most 50) and region are required');
      if (!state.regions.some((r) => r.name === body.region)) return notFound('Region');
      if (state.environments.has(body.name)) return fail(409, 'Environment name already exists', 'conflict');
      const environment = { id: nextId++, name: body.name, region: body.region, created_at: new Date().toISOString() };
      state.environments.set(environment.name, environment);
      return ok({ environment: environmentWire(environment) });
    }

    if (path === '/core/keypairs' && method === 'GET') {
      const { items, ...paging } = page(state.keypairs, query);
      return ok({
        keypairs: items.map((k) => ({ id: k.id, name: k.name, public_key: k.public_key, fingerprint: `SHA256:${k.id}`, created_at: new Date().toISOString(), environment: environmentWire(state.environments.get(k.environment)!) })),
        ...paging,
      });
    }
    if (path === '/core/keypairs' && method === 'POST') {
      if (!isObject(body) || typeof body.name !== 'string' || body.name.length > 50 || typeof body.environment_name !== 'string' || typeof body.public_key !== 'string') {
        return invalid('environment_name, name (at most 50) and public_key are required');
      }
      if (!state.environments.has(body.environment_name)) return notFound('Environment');
      if (!/^(ssh-|ecdsa-)\S+ \S+/.test(body.public_key)) return invalid('Invalid public key');
      if (state.keypairs.some((k) => k.name === body.name && k.environment === body.environment_name)) return fail(409, 'Keypair name already exists', 'conflict');
      const keypair = { id: nextId++, name: body.name, environment: body.environment_name, public_key: body.public_key };
      state.keypairs.push(keypair);
      return ok({ keypair: { ...keypair, fingerprint: `SHA256:${keypair.id}`, created_at: new Date().toISOString(), environment: environmentWire(state.environments.get(keypair.environment)!) } });
    }

    if (path === '/core/virtual-machines' && method === 'GET') {
      const { items, ...paging } = page([...state.vms.values()], query);
      return ok({ instances: items.map(vmWire), ...paging });
    }
    if (path === '/core/virtual-machines' && method === 'POST') return createVm(body);
    const vmPath = /^\/core\/virtual-machines\/(\d+)(\/hard-reboot)?$/.exec(path);
    if (vmPath) {
      const vm = state.vms.get(Number(vmPath[1]));
      if (!vm) return notFound('Virtual machine');
      if (vmPath[2] && method === 'GET') {
        if (statusOf(vm) !== 'ACTIVE') return invalid(`Cannot hard reboot a virtual machine in ${statusOf(vm)} state`);
        vm.hardReboots += 1;
        return ok();
      }
      if (method === 'GET') return ok({ instance: vmWire(vm) });
      if (method === 'DELETE') {
        if (statusOf(vm) === 'CREATING') return fail(400, 'Cannot delete a virtual machine while it is still creating', 'vm_creating');
        state.vms.delete(vm.id);
        return ok();
      }
    }

    if (path === '/core/volumes' && method === 'GET') {
      const { items, ...paging } = page([...state.volumes.values()], query);
      return ok({ volumes: items.map(volumeWire), ...paging });
    }
    if (path === '/core/volumes' && method === 'POST') {
      if (!isObject(body) || typeof body.name !== 'string' || body.name.length > 50 || typeof body.environment_name !== 'string' || !Number.isInteger(body.size) || typeof body.volume_type !== 'string') {
        return invalid('environment_name, name (at most 50), size and volume_type are required');
      }
      if (!state.environments.has(body.environment_name)) return notFound('Environment');
      if ([...state.volumes.values()].some((v) => v.name === body.name && v.environment === body.environment_name)) return fail(409, 'Volume name already exists', 'conflict');
      const volume: FakeHyperstackVolume = { id: nextId++, name: body.name, environment: body.environment_name, size: body.size, volumeType: body.volume_type, description: typeof body.description === 'string' ? body.description : '' };
      state.volumes.set(volume.id, volume);
      return ok({ volume: volumeWire(volume) });
    }
    const volumePath = /^\/core\/volumes\/(\d+)$/.exec(path);
    if (volumePath) {
      const volume = state.volumes.get(Number(volumePath[1]));
      if (!volume) return notFound('Volume');
      if (method === 'GET') return ok({ volume: volumeWire(volume) });
      if (method === 'DELETE') {
        if (holderOf(volume)) return invalid('Volume is attached to a virtual machine; detach it first');
        state.volumes.delete(volume.id);
        return ok();
      }
    }
    return notFound(`${method} ${path}`);
  };

  const answer = (res: ServerResponse, record: RecordedExchange, reply: Answer) => {
    record.status = reply.status;
    record.answer = reply.body;
    res.writeHead(reply.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(reply.body));
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
    const fault = faults.find((f) => f.remaining > 0 && (f.path === null || path.includes(f.path)) && (f.method === null || f.method === record.method));
    if (fault) {
      fault.remaining -= 1;
      return answer(res, record, fail(fault.status, fault.message, 'injected'));
    }
    if (req.headers.api_key !== state.apiKey) return answer(res, record, fail(401, 'Invalid API key', 'unauthorized'));
    if (badJson) return answer(res, record, invalid('Request body is not valid JSON'));
    answer(res, record, route(record.method, path, url.searchParams, body));
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status: false, message: String(error), error_reason: 'internal' }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${PREFIX}`,
    state,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
