import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { defaultCatalog, type FakeVastOffer } from './catalog.ts';

/**
 * A local stand-in for console.vast.ai, written from Vast's published API: the search endpoint with its
 * operator filters, accept-an-ask, the two instance lists, destroy, reboot, and Vast's quirks
 * (one instance object under the plural `instances` key, env as a string or an object, errors that
 * still carry `new_contract`, plain-text 429s without Retry-After, two spellings of "already gone").
 * Interruptible instances: `price` on the create is the bid (compute only, storage billed beside it); a bid under
 * the ask's `min_bid` makes the instance stopped and answers `invalid_price` with its `new_contract` (as dstack saw);
 * an interruptible rental leaves the ask listed, and when the minimum bid rises over a bid (setMinBid) or an
 * on-demand renter takes the ask, the instance is outbid: `cur_state`, `intended_status` and `next_state` all
 * "stopped", `actual_status` "exited".
 */

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  rawBody: string;
  body: unknown;
  at: number;
}

export interface FakeVastInstance {
  id: number;
  offerId: number;
  label: string | null;
  image: string;
  disk: number;
  runtype: string;
  /** The env exactly as the client sent it: a docker-flag string or an object. */
  env: unknown;
  extraEnv: [string, string][];
  /** Container ports asked for with `-p P:P` in the env (either form); each gets a host port while running. */
  containerPorts: number[];
  /** `image_login` as sent: "-u USER -p PASS REGISTRY". */
  imageLogin: string | null;
  onstart: string | null;
  intended: 'running' | 'stopped';
  bootStartedAt: number;
  rebootCount: number;
  isBid: boolean;
  /** The bid (`price`) of an interruptible instance, USD per hour; null on demand. */
  bid: number | null;
  /** Fields a test forces into the wire record (actual_status, status_msg, ports ...). */
  overrides: Record<string, unknown>;
}

interface Fault {
  remaining: number;
  status: number;
  body: unknown;
  headers: Record<string, string>;
  method?: string;
  path?: RegExp;
}

export interface FakeVastState {
  apiKey: string;
  offers: Map<number, FakeVastOffer>;
  instances: Map<number, FakeVastInstance>;
  requests: RecordedRequest[];
  /** Added to every answer. */
  latencyMs: number;
  /** Before an instance reports running (default 0: running at the first read). */
  bootMs: number;
  /** The real search endpoint enforces a minimum interval per identity; 0 turns the check off. */
  searchMinIntervalMs: number;
  /** How a destroy of an unknown instance is answered: the spec's 404 not_found or what dstack saw. */
  goneAnswer: { status: number; error: 'not_found' | 'no_such_instance' };
  faults: Fault[];
  /** Next creates that make the instance but never answer (the client's timeout fires). */
  hangingCreates: number;
  /** Next creates that make the instance (stopped) but answer an error carrying `new_contract`. */
  erroringCreates: { remaining: number; status: number };
  nextInstanceId: number;
  lastSearchAt: number | null;
}

export interface FakeVast {
  url: string;
  state: FakeVastState;
  /** The next `count` requests (matching method / path when given) answer `status` with `body`. */
  failNext(count: number, options?: { status?: number; body?: unknown; headers?: Record<string, string>; method?: string; path?: RegExp }): void;
  /** The next `count` requests answer 429 like Vast: plain text or JSON `detail`, no Retry-After. */
  rateLimitNext(count: number, options?: { style?: 'text' | 'json'; method?: string; path?: RegExp }): void;
  hangNextCreate(count?: number): void;
  errorWithContractOnNextCreate(count?: number, status?: number): void;
  /** The ask's minimum bid moves (its bidders' market): live interruptible instances bidding under it are outbid. */
  setMinBid(offerId: number, minBid: number): void;
  /** The interruptible instance is outbid now (someone bid more). */
  outbid(instanceId: number): void;
  requestsTo(method: string, path: RegExp): RecordedRequest[];
  close(): Promise<void>;
}

const SEARCH_CONTROL_KEYS = new Set(['limit', 'order', 'type', 'allocated_storage']);
const SEARCH_TYPES = new Set(['on-demand', 'ondemand', 'bid', 'reserved']);
const RUNTYPES = new Set(['ssh', 'ssh_direct', 'ssh_proxy', 'jupyter', 'jupyter_direct', 'jupyter_proxy', 'args']);
const OPERATORS = new Set(['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'notin']);

const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
  if (res.writableEnded || res.destroyed) return;
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json', ...headers });
  res.end(text);
};

const error = (code: string, msg: string, extra: Record<string, unknown> = {}) => ({ success: false, error: code, msg, ...extra });

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The v1 list cursor: opaque base64url JSON, as Vast's own tokens look ("eyJ..."). */
const cursorAfter = (id: number): string => Buffer.from(JSON.stringify({ after_id: id })).toString('base64url');

/** The id a cursor continues after, or null when the text is not a cursor this server issued. */
function cursorPosition(token: string): number | null {
  if (!/^[A-Za-z0-9_-]+$/.test(token)) return null; // quotes, padding, spaces: not one of ours
  try {
    const decoded = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { after_id?: unknown };
    return Number.isSafeInteger(decoded?.after_id) && cursorAfter(decoded.after_id as number) === token ? (decoded.after_id as number) : null;
  } catch {
    return null;
  }
}

/** The search's derived fields: price for the storage asked for, the verified flag the filters use. */
const searchView = (offer: FakeVastOffer, allocated: number): Record<string, unknown> => {
  const storageHour = (offer.storage_cost * allocated) / 30 / 24;
  return {
    ...offer,
    ask_contract_id: offer.id,
    bundle_id: offer.id + 1,
    gpu_total_ram: offer.gpu_ram * offer.num_gpus,
    verified: offer.verification === 'verified',
    is_bid: false,
    storage_total_cost: storageHour,
    dph_total: offer.dph_base + storageHour,
    inet_down_cost: 0.005,
    inet_up_cost: 0.005,
  };
};

const compare = (value: unknown, op: string, operand: unknown): boolean => {
  switch (op) {
    case 'eq':
      return value === operand;
    case 'neq':
      return value !== operand;
    case 'in':
      return Array.isArray(operand) && operand.includes(value);
    case 'notin':
      return Array.isArray(operand) && !operand.includes(value);
    default: {
      if (typeof value !== 'number' || typeof operand !== 'number') return false;
      if (op === 'gt') return value > operand;
      if (op === 'gte') return value >= operand;
      if (op === 'lt') return value < operand;
      return value <= operand;
    }
  }
};

/** The container ports of `-p HOST:CONTAINER` flags, from either env form; null when a flag is malformed. */
function parsePorts(env: unknown): number[] | null {
  const flags: string[] = [];
  if (typeof env === 'string') {
    const tokens = env.match(/\S+/g) ?? [];
    for (let i = 0; i < tokens.length; i++) if (tokens[i] === '-p') flags.push(tokens[++i] ?? '');
  } else if (env !== null && typeof env === 'object') {
    for (const key of Object.keys(env)) if (key.startsWith('-p ')) flags.push(key.slice(3).trim());
  }
  const ports: number[] = [];
  for (const flag of flags) {
    const match = /^(\d{1,5}):(\d{1,5})(?:\/(?:tcp|udp))?$/.exec(flag);
    if (!match || Number(match[2]) < 1 || Number(match[2]) > 65_535) return null;
    ports.push(Number(match[2]));
  }
  return ports;
}

/** `image_login` is docker login's flags: "-u USER -p PASS REGISTRY". */
const IMAGE_LOGIN = /^-u \S+ -p \S+ \S+$/;

/** Docker-flag string ("-e K=V -p 22:22") or object ({"K": "V", "-p 22:22": "1"}) -> env pairs. */
function parseEnv(env: unknown): [string, string][] | null {
  if (env === undefined || env === null) return [];
  const pairs: [string, string][] = [];
  if (typeof env === 'string') {
    const tokens = env.match(/"[^"]*"|'[^']*'|\S+/g) ?? [];
    for (let i = 0; i < tokens.length; i++) {
      if (tokens[i] !== '-e') continue;
      const assignment = (tokens[++i] ?? '').replace(/^["']|["']$/g, '');
      const eq = assignment.indexOf('=');
      if (eq > 0) pairs.push([assignment.slice(0, eq), assignment.slice(eq + 1)]);
    }
    return pairs;
  }
  if (typeof env === 'object' && !Array.isArray(env)) {
    for (const [key, value] of Object.entries(env as Record<string, unknown>)) {
      if (!key.startsWith('-')) pairs.push([key, String(value)]);
    }
    return pairs;
  }
  return null;
}

function renderInstance(state: FakeVastState, instance: FakeVastInstance): Record<string, unknown> {
  const offer = state.offers.get(instance.offerId);
  const booted = instance.intended === 'running' && Date.now() - instance.bootStartedAt >= state.bootMs;
  const sshPort = 20000 + (instance.id % 10000);
  return {
    id: instance.id,
    machine_id: offer?.machine_id ?? null,
    label: instance.label,
    actual_status: instance.intended === 'stopped' ? 'exited' : booted ? 'running' : null,
    intended_status: instance.intended,
    cur_state: instance.intended,
    next_state: instance.intended,
    status_msg: booted ? 'success, running' : 'Pulling image',
    image_uuid: instance.image,
    template_hash_id: null,
    extra_env: instance.extraEnv,
    onstart: instance.onstart,
    public_ipaddr: booted ? `${offer?.public_ipaddr ?? '198.51.100.1'}\n` : null,
    ssh_host: `ssh${(instance.id % 9) + 1}.vast.ai`,
    ssh_port: sshPort,
    ports: booted
      ? Object.fromEntries(
          instance.containerPorts.map((port, i) => [`${port}/tcp`, [{ HostIp: '0.0.0.0', HostPort: String(41000 + ((instance.id + i * 7) % 1000)) }]]),
        )
      : {},
    num_gpus: offer?.num_gpus ?? null,
    gpu_name: offer?.gpu_name ?? null,
    gpu_ram: offer?.gpu_ram ?? null,
    cpu_cores_effective: offer?.cpu_cores_effective ?? null,
    cpu_ram: offer?.cpu_ram ?? null,
    disk_space: instance.disk,
    dph_base: offer?.dph_base ?? null,
    dph_total: offer ? (instance.bid ?? offer.dph_base) + (offer.storage_cost * instance.disk) / 30 / 24 : null,
    is_bid: instance.isBid,
    min_bid: offer?.min_bid ?? null,
    start_date: instance.bootStartedAt / 1000,
    end_date: offer ? instance.bootStartedAt / 1000 + offer.duration : null,
    geolocation: offer?.geolocation ?? null,
    volume_info: null,
    ...instance.overrides,
  };
}

export async function startFakeVast(options: { apiKey?: string; offers?: FakeVastOffer[] } = {}): Promise<FakeVast> {
  const state: FakeVastState = {
    apiKey: options.apiKey ?? 'vast-test-key',
    offers: new Map((options.offers ?? defaultCatalog()).map((offer) => [offer.id, offer])),
    instances: new Map(),
    requests: [],
    latencyMs: 0,
    bootMs: 0,
    searchMinIntervalMs: 0,
    goneAnswer: { status: 404, error: 'not_found' },
    faults: [],
    hangingCreates: 0,
    erroringCreates: { remaining: 0, status: 400 },
    nextInstanceId: 7_000_001,
    lastSearchAt: null,
  };

  /** Outbid: Vast stops the instance (all three states "stopped"); its disk stays, billed, until it is destroyed. */
  function outbid(instance: FakeVastInstance): void {
    if (!instance.isBid || instance.intended === 'stopped') return;
    instance.intended = 'stopped';
    instance.overrides.status_msg = 'Instance stopped: outbid';
  }

  /** Bearer header, or the `api_key` query parameter some endpoints document. null when none was sent. */
  const credentialOf = (recorded: RecordedRequest): string | null => {
    const header = recorded.headers.authorization;
    if (typeof header === 'string') return header.replace(/^Bearer\s+/i, '');
    return recorded.query.api_key ?? null;
  };

  function search(recorded: RecordedRequest, res: ServerResponse): void {
    const body = recorded.body;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      return send(res, 400, error('invalid_args', 'search body must be a JSON object'));
    }
    const now = Date.now();
    if (state.searchMinIntervalMs > 0 && state.lastSearchAt !== null && now - state.lastSearchAt < state.searchMinIntervalMs) {
      return send(res, 429, `API requests too frequent: endpoint threshold=${state.searchMinIntervalMs / 1000}`);
    }
    state.lastSearchAt = now;
    const query = body as Record<string, unknown>;
    const type = query.type ?? 'on-demand';
    if (typeof type !== 'string' || !SEARCH_TYPES.has(type)) return send(res, 400, error('invalid_args', `unknown type ${String(type)}`));
    const allocated = query.allocated_storage ?? 5;
    if (typeof allocated !== 'number' || allocated < 0) return send(res, 400, error('invalid_args', 'allocated_storage must be a number'));
    const limit = query.limit ?? 64;
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1) return send(res, 400, error('invalid_args', 'limit must be a positive integer'));

    let rows = [...state.offers.values()].map((offer) => searchView(offer, allocated));
    const known = new Set(Object.keys(rows[0] ?? searchView(defaultCatalog()[0]!, 0)));
    for (const [field, condition] of Object.entries(query)) {
      if (SEARCH_CONTROL_KEYS.has(field)) continue;
      if (!known.has(field)) return send(res, 400, error('invalid_args', `unknown search field ${field}`));
      if (condition === null || typeof condition !== 'object' || Array.isArray(condition)) {
        return send(res, 400, error('invalid_args', `${field} needs an operator object`));
      }
      for (const [op, operand] of Object.entries(condition as Record<string, unknown>)) {
        if (!OPERATORS.has(op)) return send(res, 400, error('invalid_args', `unknown operator ${op}`));
        rows = rows.filter((row) => compare(row[field], op, operand));
      }
    }
    const order = Array.isArray(query.order) ? (query.order as [string, string][]) : [['score', 'desc']];
    rows.sort((a, b) => {
      for (const [field = '', direction] of order) {
        const x = a[field] as number;
        const y = b[field] as number;
        if (x !== y) return (x < y ? -1 : 1) * (direction === 'desc' ? -1 : 1);
      }
      return 0;
    });
    send(res, 200, { offers: rows.slice(0, limit) });
  }

  function create(offerId: number, recorded: RecordedRequest, res: ServerResponse): void {
    const body = recorded.body as Record<string, unknown> | null;
    const offer = state.offers.get(offerId);
    if (!offer) return send(res, 404, error('invalid_args', `no_such_ask: ask ${offerId} does not exist`, { ask_id: offerId }));
    if (offer.rented || !offer.rentable) return send(res, 410, error('no_such_ask', `ask ${offerId} is no longer available`, { ask_id: offerId }));
    if (body === null || typeof body !== 'object') return send(res, 400, error('invalid_args', 'body must be a JSON object'));
    if (typeof body.image !== 'string' && typeof body.template_hash_id !== 'string') {
      return send(res, 400, error('invalid_args', 'image or template_hash_id is required', { ask_id: offerId }));
    }
    if (typeof body.image === 'string' && body.image.length > 1024) return send(res, 400, error('invalid_args', 'image too long'));
    const disk = body.disk ?? 8;
    if (typeof disk !== 'number' || disk < 8) return send(res, 400, error('invalid_args', 'disk must be at least 8 GB', { ask_id: offerId }));
    if (body.label !== undefined && (typeof body.label !== 'string' || body.label.length > 256)) {
      return send(res, 400, error('invalid_args', 'label must be a string of at most 256 characters'));
    }
    const runtype = body.runtype ?? 'ssh';
    if (typeof runtype !== 'string' || !RUNTYPES.has(runtype)) return send(res, 400, error('invalid_args', `unknown runtype ${String(runtype)}`));
    const extraEnv = parseEnv(body.env);
    if (extraEnv === null) return send(res, 400, error('invalid_args', 'env must be a string or an object'));
    const containerPorts = parsePorts(body.env);
    if (containerPorts === null) return send(res, 400, error('invalid_args', 'a port flag in env must read -p HOST:CONTAINER'));
    if (body.image_login !== undefined && (typeof body.image_login !== 'string' || !IMAGE_LOGIN.test(body.image_login))) {
      return send(res, 400, error('invalid_args', 'image_login must read "-u USER -p PASS REGISTRY"'));
    }
    if (body.onstart !== undefined && typeof body.onstart !== 'string') return send(res, 400, error('invalid_args', 'onstart must be a string'));
    if (body.price !== undefined && (typeof body.price !== 'number' || body.price < 0.001 || body.price > 128)) {
      return send(res, 400, error('invalid_price', 'price must be between 0.001 and 128', { ask_id: offerId }));
    }

    const id = state.nextInstanceId++;
    const bid = typeof body.price === 'number' ? body.price : null;
    // a bid under the ask's minimum: the instance is made stopped, and the answer is an error naming it
    const underbid = bid !== null && bid < offer.min_bid;
    const erroring = state.erroringCreates.remaining > 0 || underbid;
    if (erroring && !underbid) state.erroringCreates.remaining--;
    state.instances.set(id, {
      id,
      offerId,
      label: typeof body.label === 'string' ? body.label : null,
      image: typeof body.image === 'string' ? body.image : 'template',
      disk,
      runtype,
      env: body.env,
      extraEnv,
      containerPorts,
      imageLogin: typeof body.image_login === 'string' ? body.image_login : null,
      onstart: typeof body.onstart === 'string' ? body.onstart : null,
      intended: erroring || body.target_state === 'stopped' ? 'stopped' : 'running',
      bootStartedAt: Date.now(),
      rebootCount: 0,
      isBid: bid !== null,
      bid,
      overrides: {},
    });
    // an interruptible rental leaves the ask listed; an on-demand one takes it, outbidding whoever bid on it
    if (bid === null) {
      offer.rented = true;
      for (const other of state.instances.values()) if (other.offerId === offerId && other.isBid) outbid(other);
    }

    if (state.hangingCreates > 0) {
      state.hangingCreates--;
      return; // the instance exists; the answer never comes
    }
    if (underbid) {
      return send(res, 400, error('invalid_price', `instance created stopped: bid ${bid} is below the minimum bid ${offer.min_bid}`, { new_contract: id, ask_id: offerId }));
    }
    if (erroring) {
      return send(res, state.erroringCreates.status, error('invalid_price', 'instance created stopped: price below the host minimum', { new_contract: id, ask_id: offerId }));
    }
    send(res, 200, { success: true, new_contract: id, instance_api_key: randomBytes(16).toString('hex') });
  }

  const instanceId = (text: string | undefined): number | null => (text && /^\d+$/.test(text) ? Number(text) : null);

  function listV1(recorded: RecordedRequest, res: ServerResponse): void {
    const parsed: Record<string, unknown> = {};
    for (const key of ['limit', 'order_by', 'select_cols', 'select_filters']) {
      const raw = recorded.query[key];
      if (raw === undefined) continue;
      try {
        parsed[key] = JSON.parse(raw);
      } catch {
        return send(res, 400, error('invalid_args', `${key} must be JSON-encoded`));
      }
    }
    const limit = Math.min(25, typeof parsed.limit === 'number' && parsed.limit > 0 ? parsed.limit : 25);
    // after_token is the previous answer's next_token as it is: a JSON-quoted or made-up one is a 400
    const token = recorded.query.after_token;
    const after = token === undefined ? 0 : cursorPosition(token);
    if (after === null) return send(res, 400, error('invalid_args', 'invalid after_token: send the previous next_token unchanged'));
    let all = [...state.instances.values()].sort((a, b) => a.id - b.id).map((instance) => renderInstance(state, instance));
    const filters = (parsed.select_filters ?? {}) as Record<string, Record<string, unknown>>;
    for (const [field, condition] of Object.entries(filters)) {
      if (!['actual_status', 'gpu_name', 'label', 'id'].includes(field)) {
        return send(res, 400, error('invalid_args', `cannot filter on computed column ${field}`));
      }
      for (const [op, operand] of Object.entries(condition)) all = all.filter((row) => compare(row[field], op, operand));
    }
    const rest = all.filter((row) => (row.id as number) > after);
    const page = rest.slice(0, limit);
    const more = rest.length > page.length;
    const labelCounts: Record<string, number> = {};
    for (const row of all) if (typeof row.label === 'string') labelCounts[row.label] = (labelCounts[row.label] ?? 0) + 1;
    send(res, 200, {
      success: true,
      instances_found: page.length,
      total_instances: all.length,
      label_counts: labelCounts,
      next_token: more ? cursorAfter(page.at(-1)!.id as number) : null,
      instances: page,
    });
  }

  function route(recorded: RecordedRequest, res: ServerResponse): void {
    const { method, path } = recorded;
    let match: RegExpExecArray | null;
    if (method === 'POST' && path === '/api/v0/bundles/') return search(recorded, res);
    if (method === 'PUT' && (match = /^\/api\/v0\/asks\/(\d+)\/$/.exec(path))) return create(Number(match[1]), recorded, res);
    if (method === 'GET' && path === '/api/v1/instances/') return listV1(recorded, res);
    if (method === 'GET' && path === '/api/v0/instances/') {
      const all = [...state.instances.values()].map((instance) => renderInstance(state, instance));
      return send(res, 200, { instances_found: all.length, instances: all });
    }
    if (method === 'PUT' && (match = /^\/api\/v0\/instances\/reboot\/([^/]+)\/$/.exec(path))) {
      const instance = state.instances.get(instanceId(match[1]) ?? -1);
      if (!instance) return send(res, 404, error('no_such_instance', `instance ${match[1]} not found`));
      instance.rebootCount++;
      instance.bootStartedAt = Date.now();
      return send(res, 200, { success: true });
    }
    if ((match = /^\/api\/v0\/instances\/([^/]+)\/$/.exec(path))) {
      const id = instanceId(match[1]);
      if (id === null) return send(res, 400, error('invalid_args', 'instance id must be an integer'));
      const instance = state.instances.get(id);
      if (method === 'GET') return send(res, 200, { instances: instance ? renderInstance(state, instance) : null });
      if (method === 'DELETE') {
        if (!instance) return send(res, state.goneAnswer.status, error(state.goneAnswer.error, `instance ${id} not found`));
        state.instances.delete(id);
        const offer = state.offers.get(instance.offerId);
        if (offer && !instance.isBid) offer.rented = false;
        return send(res, 200, { success: true });
      }
      if (method === 'PUT') {
        if (!instance) return send(res, 404, error('no_such_instance', `instance ${id} not found`));
        const change = (recorded.body ?? {}) as { label?: unknown; state?: unknown };
        if (typeof change.label === 'string') {
          if (change.label.length > 1024) return send(res, 400, error('label_too_long', 'label is too long'));
          instance.label = change.label;
        }
        if (change.state === 'running' || change.state === 'stopped') {
          instance.intended = change.state;
          instance.bootStartedAt = Date.now();
        }
        return send(res, 200, { success: true, msg: 'updated' });
      }
    }
    send(res, 404, error('not_found', `no endpoint ${method} ${path}`));
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake.vast');
    const rawBody = await readBody(req);
    let body: unknown = null;
    if (rawBody.length > 0) {
      try {
        body = JSON.parse(rawBody);
      } catch {
        body = rawBody;
      }
    }
    const recorded: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      rawBody,
      body,
      at: Date.now(),
    };
    state.requests.push(recorded);
    if (state.latencyMs > 0) await delay(state.latencyMs);

    const fault = state.faults.find(
      (f) => f.remaining > 0 && (!f.method || f.method === recorded.method) && (!f.path || f.path.test(recorded.path)),
    );
    if (fault) {
      fault.remaining--;
      return send(res, fault.status, fault.body, fault.headers);
    }

    const credential = credentialOf(recorded);
    // offer search works anonymously (gpuhunt relies on it), but a key that is sent must be valid
    const anonymousOk = recorded.method === 'POST' && recorded.path === '/api/v0/bundles/' && credential === null;
    if (!anonymousOk && credential !== state.apiKey) {
      return send(res, 401, error('invalid_api_key', 'Invalid or missing API key'));
    }
    route(recorded, res);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((cause: unknown) => send(res, 500, error('server_error', String(cause))));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    state,
    failNext(count, opts = {}) {
      state.faults.push({
        remaining: count,
        status: opts.status ?? 503,
        body: opts.body ?? error('server_error', 'upstream unavailable'),
        headers: opts.headers ?? {},
        ...(opts.method ? { method: opts.method } : {}),
        ...(opts.path ? { path: opts.path } : {}),
      });
    },
    rateLimitNext(count, opts = {}) {
      state.faults.push({
        remaining: count,
        status: 429,
        body: opts.style === 'json' ? { detail: 'API requests too frequent endpoint threshold=4.5' } : 'API requests too frequent',
        headers: {},
        ...(opts.method ? { method: opts.method } : {}),
        ...(opts.path ? { path: opts.path } : {}),
      });
    },
    hangNextCreate(count = 1) {
      state.hangingCreates += count;
    },
    errorWithContractOnNextCreate(count = 1, status = 400) {
      state.erroringCreates = { remaining: state.erroringCreates.remaining + count, status };
    },
    setMinBid(offerId, minBid) {
      const offer = state.offers.get(offerId);
      if (!offer) throw new Error(`fake vast: no ask ${offerId}`);
      offer.min_bid = minBid;
      for (const instance of state.instances.values()) {
        if (instance.offerId === offerId && instance.bid !== null && instance.bid < minBid) outbid(instance);
      }
    },
    outbid(instanceId) {
      const instance = state.instances.get(instanceId);
      if (!instance?.isBid) throw new Error(`fake vast: no interruptible instance ${instanceId}`);
      outbid(instance);
    },
    requestsTo(method, path) {
      return state.requests.filter((r) => r.method === method && path.test(r.path));
    },
    close() {
      return new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}
