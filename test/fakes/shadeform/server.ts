import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RecordedExchange } from '../../support/provider-description.ts';

/**
 * A local stand-in for Shadeform's API v1, an aggregator of other clouds, written from its published OpenAPI file
 * (shadeform-openapi.json among the provider descriptions, test/support/provider-description.ts: instance types, create, info, list, delete; test/contract/providers/
 * shadeform-description.test.ts holds those exchanges to it) and, for what that file lacks, from Shadeform's API
 * reference (docs.shadeform.ai/api-reference; SkyPilot's client uses restart and keys): `POST /instances/{id}/restart`,
 * `GET /sshkeys`, `POST /sshkeys/add`, and the volumes (`GET /volumes`, `GET /volumes/types`, `POST /volumes/create`,
 * `GET /volumes/{id}/info`, `POST /volumes/{id}/delete`). docs/decisions.md, 'Shadeform', says where each part came from.
 * - the `X-API-KEY` header; `hourly_price` in integer cents for the whole instance; availability per region and
 *   rental type: an `on_demand` entry and, where its cloud sells spot, a `spot` entry at its own `hourly_price`;
 * - a create takes `rental_type: "spot"` for a spot machine (refused where spot is not available); a spot machine's
 *   `hourly_price` is the spot price of the moment;
 * - volumes: per cloud and region, priced per GB-hour as a string written as the reference's examples write it
 *   (".0001"); `mounted_by` names the instance mounting it ("" when none, the field being required); a create
 *   mounts at most one (`volume_ids` of size one), of its own cloud and region; a volume mounted by an instance not
 *   yet deleted is refused deletion (409);
 * - a create is asynchronous: it answers `{id, cloud_assigned_id}` and the instance is `pending` until `bootMs` has
 *   passed, then `active` with its `ip`, `ssh_user` and `ssh_port`, which depend on the cloud behind it;
 * - a delete moves it to `deleting`, then (`deleteMs`) `deleted`; a machine its cloud took back (`preempt`) shows as
 *   `deleting` with `status_details: "preempted"` (both from the newer reference: the published file's status enum
 *   has only pending, active, deleted).
 * Where both are silent the fake chooses, and says so: errors are `{error, message}` with the status; a delete of
 * an instance already deleting or deleted answers 200 again; a type with no availability in the region asked for
 * refuses a create with 409.
 */

export interface FakeShadeformType {
  cloud: string;
  shade_instance_type: string;
  cloud_instance_type: string;
  gpu_type: string;
  num_gpus: number;
  vram_per_gpu_in_gb: number;
  vcpus: number;
  memory_in_gb: number;
  storage_in_gb: number;
  hourly_price: number;
  availability: { region: string; available: boolean }[];
  /** Where its cloud sells it as spot, at what whole-machine price in cents. */
  spot: { region: string; available: boolean; hourly_price: number }[];
}

export interface FakeShadeformVolumeType {
  cloud: string;
  region: string;
  /** USD per GB-hour as the wire writes it (".0001"). */
  price_per_gb_per_hour: string;
}

export interface FakeShadeformVolume {
  id: string;
  cloud: string;
  region: string;
  name: string;
  sizeInGb: number;
}

export interface FakeShadeformInstance {
  id: string;
  cloud: string;
  region: string;
  type: string;
  name: string;
  tags: string[];
  sshKeyId: string | null;
  volumeIds: string[];
  launchConfiguration: Record<string, unknown> | null;
  rentalType: 'on_demand' | 'spot';
  createdAt: number;
  deletedAt: number | null;
  /** Set to force a status; otherwise pending until bootMs has passed, then active. */
  status: string | null;
  statusDetails: string | null;
  ip: string;
  restarts: number;
}

export interface FakeShadeformState {
  apiKey: string;
  types: FakeShadeformType[];
  instances: Map<string, FakeShadeformInstance>;
  sshKeys: Map<string, { id: string; name: string; public_key: string }>;
  volumeTypes: FakeShadeformVolumeType[];
  volumes: Map<string, FakeShadeformVolume>;
  exchanges: RecordedExchange[];
  bootMs: number;
  /** How long a deleted instance stays `deleting`. */
  deleteMs: number;
  /** The login and port of the machines of each cloud behind Shadeform. */
  logins: Record<string, { user: string; port: number }>;
  failNext(count: number, status: number, options?: { path?: string }): void;
  hangNext(count: number, path?: string): void;
  /** Its cloud takes the machine back: `deleting`, status_details "preempted". */
  preempt(instanceId: string): void;
  /** The spot market moves: the whole-machine spot price of a type in a region, exact decimal USD per hour. */
  setSpotPrice(cloud: string, shadeType: string, region: string, priceUsdPerHour: string): void;
  exchangesTo(method: string, path: string): RecordedExchange[];
}

export interface FakeShadeform {
  /** Base URL including /v1. */
  url: string;
  state: FakeShadeformState;
  close(): Promise<void>;
}

const type = (
  cloud: string,
  shade: string,
  cloudType: string,
  gpu: string,
  count: number,
  vram: number,
  cents: number,
  regions: [string, boolean][],
  spot: [string, boolean, number][] = [],
): FakeShadeformType => ({
  cloud,
  shade_instance_type: shade,
  cloud_instance_type: cloudType,
  gpu_type: gpu,
  num_gpus: count,
  vram_per_gpu_in_gb: vram,
  vcpus: 14 * count,
  memory_in_gb: 46 * count,
  storage_in_gb: 512 * count,
  hourly_price: cents,
  availability: regions.map(([region, available]) => ({ region, available })),
  spot: spot.map(([region, available, hourly_price]) => ({ region, available, hourly_price })),
});

/** Clouds of the published enum; prices invented. */
const TYPES = (): FakeShadeformType[] => [
  type('lambdalabs', 'A6000', 'gpu_1x_a6000', 'A6000', 1, 48, 80, [['us-south-1', true], ['us-west-1', false]]),
  type('lambdalabs', 'H100', 'gpu_1x_h100_pcie', 'H100', 1, 80, 249, [['us-east-1', true]]),
  type('datacrunch', 'H100', '1H100.80S.30V', 'H100', 1, 80, 229, [['FIN-01', true]], [['FIN-01', true, 92]]),
  type('massedcompute', 'A6000', 'gpu_1x_a6000', 'A6000', 1, 48, 62, [['us-central-1', true]], [['us-central-1', true, 31]]),
  type('massedcompute', 'L40S', 'gpu_2x_l40s', 'L40S', 2, 48, 180, [['us-central-1', true]], [['us-central-1', false, 90]]),
  type('vultr', 'A100_80G', 'vcg-a100-1c-6g-4vram', 'A100', 1, 80, 139, [['ewr', true], ['lax', false]]),
];

/** Volumes where its clouds make them; one price, written as the reference's examples write it. */
const VOLUME_TYPES = (): FakeShadeformVolumeType[] => [
  { cloud: 'lambdalabs', region: 'us-south-1', price_per_gb_per_hour: '.0001' },
  { cloud: 'datacrunch', region: 'FIN-01', price_per_gb_per_hour: '.0001' },
  { cloud: 'massedcompute', region: 'us-central-1', price_per_gb_per_hour: '.0001' },
  { cloud: 'vultr', region: 'ewr', price_per_gb_per_hour: '.0001' },
];

class Answer {
  readonly status: number;
  readonly body: unknown;

  constructor(status: number, body: unknown) {
    this.status = status;
    this.body = body;
  }
}

const ok = (body: unknown) => new Answer(200, body);
const fail = (status: number, message: string) => new Answer(status, { error: message, message });
const isObject = (value: unknown): value is Record<string, any> => typeof value === 'object' && value !== null && !Array.isArray(value);
const PREFIX = '/v1';

export async function startFakeShadeform(): Promise<FakeShadeform> {
  const faults: { remaining: number; status: number; path: string | null }[] = [];
  const hangs: { remaining: number; path: string | null }[] = [];
  const hanging = new Set<ServerResponse>();
  let nextIp = 10;
  const state: FakeShadeformState = {
    apiKey: 'fake-shadeform-key',
    types: TYPES(),
    instances: new Map(),
    sshKeys: new Map(),
    volumeTypes: VOLUME_TYPES(),
    volumes: new Map(),
    exchanges: [],
    bootMs: 50,
    deleteMs: 50,
    logins: { lambdalabs: { user: 'ubuntu', port: 22 }, datacrunch: { user: 'root', port: 22 }, massedcompute: { user: 'shadeform', port: 2222 }, vultr: { user: 'root', port: 22 } },
    failNext(count, status, opts = {}) {
      faults.push({ remaining: count, status, path: opts.path ?? null });
    },
    hangNext(count, path) {
      hangs.push({ remaining: count, path: path ?? null });
    },
    preempt(instanceId) {
      const instance = state.instances.get(instanceId);
      if (!instance) throw new Error(`no instance ${instanceId}`);
      instance.status = 'deleting';
      instance.statusDetails = 'preempted';
    },
    setSpotPrice(cloud, shadeType, region, priceUsdPerHour) {
      const spot = state.types.find((t) => t.cloud === cloud && t.shade_instance_type === shadeType)?.spot.find((e) => e.region === region);
      if (!spot) throw new Error(`no spot market for ${cloud} ${shadeType} in ${region}`);
      const match = /^(\d+)(?:\.(\d{1,2}))?$/.exec(priceUsdPerHour);
      if (!match) throw new Error(`Shadeform prices are whole cents, not ${priceUsdPerHour}`);
      spot.hourly_price = Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
    },
    exchangesTo(method, path) {
      return state.exchanges.filter((e) => e.method === method && e.path === `${PREFIX}${path}`);
    },
  };

  const statusOf = (i: FakeShadeformInstance): string => {
    if (i.status) return i.status;
    if (i.deletedAt !== null) return Date.now() - i.deletedAt >= state.deleteMs ? 'deleted' : 'deleting';
    return Date.now() - i.createdAt >= state.bootMs ? 'active' : 'pending';
  };

  const configurationOf = (t: FakeShadeformType) => ({
    memory_in_gb: t.memory_in_gb,
    storage_in_gb: t.storage_in_gb,
    vcpus: t.vcpus,
    num_gpus: t.num_gpus,
    gpu_type: t.gpu_type,
    interconnect: 'pcie',
    vram_per_gpu_in_gb: t.vram_per_gpu_in_gb,
    os: 'ubuntu22.04_cuda12.2_shade_os',
    os_options: ['ubuntu22.04_cuda12.2_shade_os'],
  });

  /** A spot machine costs the spot price of the moment. */
  const priceOf = (i: FakeShadeformInstance, t: FakeShadeformType): number =>
    i.rentalType === 'spot' ? (t.spot.find((e) => e.region === i.region)?.hourly_price ?? t.hourly_price) : t.hourly_price;

  /** The instance mounting a volume: one not yet deleted whose create named it. */
  const mounterOf = (volumeId: string): FakeShadeformInstance | undefined =>
    [...state.instances.values()].find((i) => i.volumeIds.includes(volumeId) && statusOf(i) !== 'deleted');

  const volumeWire = (v: FakeShadeformVolume) => ({
    id: v.id,
    cloud: v.cloud,
    cloud_assigned_id: `${v.cloud}-${v.id.slice(0, 8)}`,
    region: v.region,
    name: v.name,
    fixed_size: true,
    size_in_gb: v.sizeInGb,
    cost_estimate: '0.00',
    supports_multi_mount: false,
    mounted_by: mounterOf(v.id)?.id ?? '',
  });

  const instanceWire = (i: FakeShadeformInstance) => {
    const t = state.types.find((x) => x.cloud === i.cloud && x.shade_instance_type === i.type)!;
    const status = statusOf(i);
    const up = status === 'active';
    const login = state.logins[i.cloud] ?? { user: 'shadeform', port: 22 };
    return {
      id: i.id,
      cloud: i.cloud,
      region: i.region,
      shade_instance_type: i.type,
      cloud_instance_type: t.cloud_instance_type,
      cloud_assigned_id: `${i.cloud}-${i.id.slice(0, 8)}`,
      shade_cloud: true,
      name: i.name,
      configuration: configurationOf(t),
      ip: up ? i.ip : '',
      ssh_user: login.user,
      ssh_port: login.port,
      status,
      ...(i.statusDetails ? { status_details: i.statusDetails } : {}),
      cost_estimate: '0.00',
      hourly_price: priceOf(i, t),
      rental_type: i.rentalType,
      created_at: new Date(i.createdAt).toISOString(),
      deleted_at: i.deletedAt === null ? null : new Date(i.deletedAt).toISOString(),
      tags: [...i.tags],
      ...(i.sshKeyId ? { ssh_key_id: i.sshKeyId } : {}),
      volume_ids: [...i.volumeIds],
      ...(i.launchConfiguration ? { launch_configuration: i.launchConfiguration } : {}),
    };
  };

  const create = (body: unknown): Answer => {
    if (!isObject(body)) return fail(400, 'body must be a JSON object');
    const { cloud, region, shade_instance_type: shade, shade_cloud: shadeCloud, name } = body;
    if (typeof cloud !== 'string' || typeof region !== 'string' || typeof shade !== 'string' || typeof shadeCloud !== 'boolean' || typeof name !== 'string') {
      return fail(400, 'cloud, region, shade_instance_type, shade_cloud and name are required');
    }
    const t = state.types.find((x) => x.cloud === cloud && x.shade_instance_type === shade);
    if (!t) return fail(400, `no instance type ${shade} on ${cloud}`);
    if (body.ssh_key_id !== undefined && (typeof body.ssh_key_id !== 'string' || !state.sshKeys.has(body.ssh_key_id))) return fail(400, 'unknown ssh_key_id');
    if (body.tags !== undefined && (!Array.isArray(body.tags) || !body.tags.every((tag) => typeof tag === 'string'))) return fail(400, 'tags must be strings');
    const launch = body.launch_configuration;
    if (launch !== undefined) {
      const good = isObject(launch) && (launch.type === 'script' ? isObject(launch.script_configuration) && typeof launch.script_configuration.base64_script === 'string' : launch.type === 'docker' && isObject(launch.docker_configuration));
      if (!good) return fail(400, 'launch_configuration: a script (base64_script) or a docker configuration');
    }
    const rentalType = body.rental_type ?? 'on_demand';
    if (rentalType !== 'on_demand' && rentalType !== 'spot') return fail(400, 'rental_type: on_demand or spot');
    const volumeIds = body.volume_ids ?? [];
    if (!Array.isArray(volumeIds) || volumeIds.length > 1 || !volumeIds.every((id) => typeof id === 'string')) return fail(400, 'volume_ids must be an array of size one');
    for (const volumeId of volumeIds as string[]) {
      const volume = state.volumes.get(volumeId);
      if (!volume) return fail(400, `unknown volume ${volumeId}`);
      if (volume.cloud !== cloud || volume.region !== region) return fail(400, 'the volume and the instance must be of the same cloud and region');
      if (mounterOf(volumeId)) return fail(409, `volume ${volumeId} is mounted by another instance`);
    }
    const entries = rentalType === 'spot' ? t.spot : t.availability;
    if (!entries.some((a) => a.region === region && a.available)) return fail(409, `${shade} is not available${rentalType === 'spot' ? ' as spot' : ''} in ${region}`);
    const instance: FakeShadeformInstance = {
      id: randomUUID(),
      cloud,
      region,
      type: shade,
      name,
      tags: (body.tags as string[] | undefined) ?? [],
      sshKeyId: (body.ssh_key_id as string | undefined) ?? null,
      volumeIds: [...(volumeIds as string[])],
      launchConfiguration: isObject(launch) ? launch : null,
      rentalType,
      createdAt: Date.now(),
      deletedAt: null,
      status: null,
      statusDetails: null,
      ip: `198.18.0.${nextIp++ % 250}`,
      restarts: 0,
    };
    state.instances.set(instance.id, instance);
    return ok({ id: instance.id, cloud_assigned_id: `${cloud}-${instance.id.slice(0, 8)}` });
  };

  const route = (method: string, path: string, body: unknown): Answer => {
    if (method === 'GET' && path === '/instances/types') {
      return ok({
        instance_types: state.types.map((t) => ({
          cloud: t.cloud,
          region: t.availability[0]?.region ?? '',
          shade_instance_type: t.shade_instance_type,
          cloud_instance_type: t.cloud_instance_type,
          configuration: configurationOf(t),
          hourly_price: t.hourly_price,
          availability: [
            ...t.availability.map((a) => ({ ...a, rental_type: 'on_demand' })),
            ...t.spot.map((a) => ({ region: a.region, available: a.available, rental_type: 'spot', hourly_price: a.hourly_price })),
          ],
        })),
      });
    }
    if (method === 'GET' && path === '/instances') {
      return ok({ instances: [...state.instances.values()].filter((i) => statusOf(i) !== 'deleted').map(instanceWire) });
    }
    if (method === 'POST' && path === '/instances/create') return create(body);
    const one = /^\/instances\/([^/]+)\/(info|delete|restart)$/.exec(path);
    if (one) {
      const instance = state.instances.get(decodeURIComponent(one[1]!));
      if (!instance) return fail(404, 'instance not found');
      const status = statusOf(instance);
      if (one[2] === 'info' && method === 'GET') return ok(instanceWire(instance));
      if (one[2] === 'delete' && method === 'POST') {
        if (instance.deletedAt === null) {
          instance.deletedAt = Date.now();
          if (instance.status !== 'deleting') instance.status = null;
        }
        return ok(undefined);
      }
      if (one[2] === 'restart' && method === 'POST') {
        if (status !== 'active') return fail(409, `cannot restart an instance that is ${status}`);
        instance.restarts += 1;
        return ok(undefined);
      }
    }
    if (method === 'GET' && path === '/volumes/types') {
      return ok({ volume_types: state.volumeTypes.map((v) => ({ ...v, supports_multi_mount: false, fixed_size: true })) });
    }
    if (method === 'GET' && path === '/volumes') return ok({ volumes: [...state.volumes.values()].map(volumeWire) });
    if (method === 'POST' && path === '/volumes/create') {
      if (!isObject(body)) return fail(400, 'body must be a JSON object');
      const { cloud, region, size_in_gb: size, name } = body;
      if (typeof cloud !== 'string' || typeof region !== 'string' || typeof name !== 'string' || !Number.isSafeInteger(size) || size < 1) {
        return fail(400, 'cloud, region, size_in_gb (a whole number of GB) and name are required');
      }
      if (!state.volumeTypes.some((v) => v.cloud === cloud && v.region === region)) return fail(400, `${cloud} makes no volumes in ${region}`);
      const volume: FakeShadeformVolume = { id: randomUUID(), cloud, region, name, sizeInGb: size };
      state.volumes.set(volume.id, volume);
      return ok({ id: volume.id });
    }
    const volume = /^\/volumes\/([^/]+)\/(info|delete)$/.exec(path);
    if (volume) {
      const found = state.volumes.get(decodeURIComponent(volume[1]!));
      if (!found) return fail(404, 'volume not found');
      if (volume[2] === 'info' && method === 'GET') return ok(volumeWire(found));
      if (volume[2] === 'delete' && method === 'POST') {
        const mounter = mounterOf(found.id);
        if (mounter) return fail(409, `You must delete the attached instance ${mounter.id} before deleting a volume`);
        state.volumes.delete(found.id);
        return ok(undefined);
      }
    }
    if (method === 'GET' && path === '/sshkeys') return ok({ ssh_keys: [...state.sshKeys.values()].map((k) => ({ ...k, is_default: false })) });
    if (method === 'POST' && path === '/sshkeys/add') {
      if (!isObject(body) || typeof body.name !== 'string' || typeof body.public_key !== 'string') return fail(400, 'name and public_key are required');
      if (!/^(ssh-|ecdsa-)\S+ \S+/.test(body.public_key)) return fail(400, 'invalid public key');
      const key = { id: randomUUID(), name: body.name, public_key: body.public_key };
      state.sshKeys.set(key.id, key);
      return ok({ id: key.id });
    }
    return fail(404, `no route for ${method} ${path}`);
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
    res.end(JSON.stringify(reply.body));
  };

  const take = <T extends { remaining: number; path: string | null }>(list: T[], path: string): T | null => {
    const hit = list.find((f) => f.remaining > 0 && (f.path === null || path.includes(f.path)));
    if (hit) hit.remaining -= 1;
    return hit ?? null;
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
    if (!url.pathname.startsWith(`${PREFIX}/`)) return answer(res, record, fail(404, 'not found'));
    const path = url.pathname.slice(PREFIX.length);
    const fault = take(faults, path);
    if (fault) return answer(res, record, fail(fault.status, 'injected failure'));
    if (req.headers['x-api-key'] !== state.apiKey) return answer(res, record, fail(401, 'invalid API key'));
    if (badJson) return answer(res, record, fail(400, 'body is not JSON'));
    const reply = route(record.method, path, body);
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
        res.end(JSON.stringify({ error: String(error) }));
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
