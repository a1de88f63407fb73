import { randomBytes, randomInt } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for the parts of GitHub a device-flow sign-in touches (docs.github.com, "Authorizing
 * OAuth apps", device flow; REST users and emails endpoints):
 * - POST /login/device/code and POST /login/oauth/access_token take form, JSON or query parameters and
 *   answer form-encoded unless the request says `Accept: application/json` (GitHub's default is a form).
 * - Token poll errors come as HTTP 200 with an `error` field (GitHub's quirk, documented for the device
 *   flow); a poll inside the interval gets slow_down and raises the interval by 5 s, sent back as
 *   `interval`; device codes expire after `expires_in`; user codes look like "WDJB-MJHT".
 * - The REST API lives under /api/v3 (as on GitHub Enterprise Server), so a client that mixes the two base
 *   URLs fails; it wants a bearer token and a User-Agent, and answers GitHub's `{message, documentation_url}`.
 * - Injected 5xx answers are HTML pages, as GitHub's are.
 * Not modelled: XML answers, the browser side beyond approve/deny (and its 50 code entries per hour).
 */

export interface FakeGithubUser {
  id: number;
  login: string;
  /** The primary address, or null for none. */
  email: string | null;
  emailVerified: boolean;
  /** Verified, non-primary addresses listed before the primary; default the user's noreply address. */
  otherEmails?: string[];
}

export interface FakeDevice {
  deviceCode: string;
  userCode: string;
  scope: string;
  expiresAt: number;
  /** Seconds; grows by 5 with every slow_down. */
  interval: number;
  lastPolledAt: number | null;
  state: 'pending' | 'approved' | 'denied';
  userId: number | null;
}

export interface RecordedRequest {
  method: string;
  /** The path as GitHub names it: "/login/device/code", "/user" (without /api/v3). */
  path: string;
  /** Query and body parameters together. */
  params: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  at: number;
  status: number | null;
}

export interface FakeGithubState {
  clientId: string;
  /** When false, /login/device/code answers 400 device_flow_disabled (the app's setting is off). */
  deviceFlowEnabled: boolean;
  /** Seconds a new device code lives (GitHub: 900). */
  expiresIn: number;
  /** Seconds between polls given to a new device code (GitHub: 5). */
  interval: number;
  devices: Map<string, FakeDevice>;
  users: Map<number, FakeGithubUser>;
  /** Issued access tokens: the user and the scope granted. */
  tokens: Map<string, { userId: number; scope: string }>;
  requests: RecordedRequest[];
  /**
   * When set, /user/emails answers this instead: a GitHub App without the "Email addresses" permission
   * gets 403 "Resource not accessible by integration"; a rate limit is 403 "API rate limit exceeded ...".
   */
  emailsRefusal: { status: number; message: string } | null;
  /** The person enters the user code in a browser and authorizes the app as `user` (created or updated). */
  approve(userCode: string, user: FakeGithubUser): void;
  /** The person clicks cancel: every later poll answers access_denied. */
  deny(userCode: string): void;
  /** The code's lifetime ends now. */
  expire(userCode: string): void;
  /** The next `count` requests (whose path contains `path`, if given) answer `status` (default 502) with an HTML page. */
  failNext(count: number, options?: { status?: number; path?: string }): void;
  /** The next `count` matching requests get no answer at all. */
  hangNext(count: number, path?: string): void;
  deviceOf(userCode: string): FakeDevice;
  requestsTo(method: string, path: string): RecordedRequest[];
}

export interface FakeGithub {
  /** GITHUB_URL: the OAuth endpoints. */
  githubUrl: string;
  /** GITHUB_API_URL: the REST API. */
  apiUrl: string;
  state: FakeGithubState;
  close(): Promise<void>;
}

interface Fault {
  remaining: number;
  status: number;
  path: string | null;
}

interface Hang {
  remaining: number;
  path: string | null;
}

interface Answer {
  status: number;
  contentType: string;
  body: string;
}

const API_PREFIX = '/api/v3';
const DEVICE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';
const ERROR_URI = 'https://docs.github.com/developers/apps/authorizing-oauth-apps#error-codes-for-the-device-flow';
/** Upper-case letters without vowels and digits: codes a person can read back and type. */
const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ0123456789';

const ERROR_DESCRIPTIONS: Record<string, string> = {
  authorization_pending: 'The authorization request is still pending.',
  slow_down: 'Too many requests have been made in the same timeframe.',
  expired_token: 'The `device_code` has expired.',
  incorrect_device_code: 'The device_code provided is not valid.',
  access_denied: 'The authorization request was denied.',
  incorrect_client_credentials: 'The client_id and/or client_secret passed are incorrect.',
  unsupported_grant_type: 'The grant type is not supported.',
  device_flow_disabled: 'Device Flow must be explicitly enabled for this App',
};

const userCode = (): string => {
  const pick = () => USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)]!;
  const half = () => Array.from({ length: 4 }, pick).join('');
  return `${half()}-${half()}`;
};

const accessToken = (): string => `gho_${randomBytes(27).toString('base64url').slice(0, 36)}`;

const normaliseUserCode = (code: string): string => code.toUpperCase().replace(/[^A-Z0-9]/g, '');

const wantsJson = (accept: string | undefined): boolean => /application\/json/i.test(accept ?? '');

/** GitHub's OAuth endpoints answer in what Accept asks for, form-encoded by default. */
const oauth = (accept: string | undefined, status: number, fields: Record<string, string | number>): Answer =>
  wantsJson(accept)
    ? { status, contentType: 'application/json; charset=utf-8', body: JSON.stringify(fields) }
    : {
        status,
        contentType: 'application/x-www-form-urlencoded; charset=utf-8',
        body: new URLSearchParams(Object.entries(fields).map(([k, v]): [string, string] => [k, String(v)])).toString(),
      };

const oauthError = (accept: string | undefined, status: number, code: string, extra: Record<string, number> = {}): Answer =>
  oauth(accept, status, { error: code, error_description: ERROR_DESCRIPTIONS[code] ?? code, error_uri: ERROR_URI, ...extra });

const json = (status: number, body: unknown): Answer => ({
  status,
  contentType: 'application/json; charset=utf-8',
  body: JSON.stringify(body),
});

const restError = (status: number, message: string): Answer =>
  json(status, { message, documentation_url: 'https://docs.github.com/rest', status: String(status) });

const unicorn = (status: number): Answer => ({
  status,
  contentType: 'text/html; charset=utf-8',
  body: `<!DOCTYPE html><html><head><title>Unicorn! · GitHub</title></head><body><p>No server is currently available to service your request. (${status})</p></body></html>`,
});

const parseBody = (contentType: string | undefined, text: string): Record<string, string> => {
  if (!text) return {};
  if (/application\/json/i.test(contentType ?? '')) {
    try {
      const parsed = JSON.parse(text) as unknown;
      if (typeof parsed !== 'object' || parsed === null) return {};
      return Object.fromEntries(Object.entries(parsed).filter(([, v]) => typeof v === 'string' || typeof v === 'number').map(([k, v]) => [k, String(v)]));
    } catch {
      return {};
    }
  }
  return Object.fromEntries(new URLSearchParams(text));
};

export async function startFakeGithub(options: { clientId?: string; now?: () => number } = {}): Promise<FakeGithub> {
  const now = options.now ?? Date.now;
  const faults: Fault[] = [];
  const hangs: Hang[] = [];
  const hanging = new Set<ServerResponse>();
  let baseUrl = '';

  const state: FakeGithubState = {
    clientId: options.clientId ?? 'Ov23liFakeClientId01',
    deviceFlowEnabled: true,
    expiresIn: 900,
    interval: 5,
    devices: new Map(),
    users: new Map(),
    tokens: new Map(),
    requests: [],
    emailsRefusal: null,
    approve(code, user) {
      const device = state.deviceOf(code);
      if (device.expiresAt <= now()) throw new Error(`user code ${code} has expired`);
      if (device.state === 'denied') throw new Error(`user code ${code} was denied`);
      state.users.set(user.id, { ...user });
      device.state = 'approved';
      device.userId = user.id;
    },
    deny(code) {
      state.deviceOf(code).state = 'denied';
    },
    expire(code) {
      state.deviceOf(code).expiresAt = now();
    },
    failNext(count, opts = {}) {
      faults.push({ remaining: count, status: opts.status ?? 502, path: opts.path ?? null });
    },
    hangNext(count, path) {
      hangs.push({ remaining: count, path: path ?? null });
    },
    deviceOf(code) {
      const wanted = normaliseUserCode(code);
      const device = [...state.devices.values()].find((d) => normaliseUserCode(d.userCode) === wanted);
      if (!device) throw new Error(`no device with user code ${code}`);
      return device;
    },
    requestsTo(method, path) {
      return state.requests.filter((r) => r.method === method && r.path === path);
    },
  };

  const deviceCode = (accept: string | undefined, params: Record<string, string>): Answer => {
    // an unknown client id: 404 with a bare error, no OAuth error code
    if (params.client_id !== state.clientId) return json(404, { error: 'Not Found' });
    if (!state.deviceFlowEnabled) return oauthError(accept, 400, 'device_flow_disabled');
    const device: FakeDevice = {
      deviceCode: randomBytes(20).toString('hex'),
      userCode: userCode(),
      scope: params.scope ?? '',
      expiresAt: now() + state.expiresIn * 1000,
      interval: state.interval,
      lastPolledAt: null,
      state: 'pending',
      userId: null,
    };
    state.devices.set(device.deviceCode, device);
    return oauth(accept, 200, {
      device_code: device.deviceCode,
      user_code: device.userCode,
      verification_uri: `${baseUrl}/login/device`,
      expires_in: state.expiresIn,
      interval: device.interval,
    });
  };

  /** Every refusal here is HTTP 200 with an `error` field, as GitHub answers token polls. */
  const accessTokenFor = (accept: string | undefined, params: Record<string, string>): Answer => {
    if (params.client_id !== state.clientId) return oauthError(accept, 200, 'incorrect_client_credentials');
    if (params.grant_type !== DEVICE_GRANT_TYPE) return oauthError(accept, 200, 'unsupported_grant_type');
    const device = state.devices.get(params.device_code ?? '');
    if (!device) return oauthError(accept, 200, 'incorrect_device_code');
    const at = now();
    if (device.expiresAt <= at) return oauthError(accept, 200, 'expired_token');
    const tooSoon = device.lastPolledAt !== null && at - device.lastPolledAt < device.interval * 1000;
    device.lastPolledAt = at;
    if (tooSoon) {
      device.interval += 5;
      return oauthError(accept, 200, 'slow_down', { interval: device.interval });
    }
    if (device.state === 'denied') return oauthError(accept, 200, 'access_denied');
    if (device.state === 'pending') return oauthError(accept, 200, 'authorization_pending');
    // approved: one token, and the device code is spent (a later poll meets incorrect_device_code)
    state.devices.delete(device.deviceCode);
    const token = accessToken();
    state.tokens.set(token, { userId: device.userId!, scope: device.scope });
    return oauth(accept, 200, { access_token: token, token_type: 'bearer', scope: device.scope.split(/\s+/).filter(Boolean).join(',') });
  };

  const userWire = (user: FakeGithubUser) => ({
    login: user.login,
    id: user.id,
    node_id: `U_kgDO${user.id.toString(36)}`,
    avatar_url: `https://avatars.githubusercontent.com/u/${user.id}?v=4`,
    html_url: `https://github.com/${user.login}`,
    type: 'User',
    site_admin: false,
    name: null,
    // the public profile address: people usually keep it private
    email: null,
    created_at: '2015-03-01T12:00:00Z',
  });

  const emailsWire = (user: FakeGithubUser) => {
    const others = user.otherEmails ?? [`${user.id}+${user.login}@users.noreply.github.com`];
    return [
      ...others.map((email) => ({ email, primary: false, verified: true, visibility: null })),
      ...(user.email ? [{ email: user.email, primary: true, verified: user.emailVerified, visibility: 'private' }] : []),
    ];
  };

  const api = (method: string, path: string, headers: IncomingMessage['headers']): Answer => {
    if (!headers['user-agent']) {
      return restError(403, 'Request forbidden by administrative rules. Please make sure your request has a User-Agent header.');
    }
    const [scheme, value] = (headers.authorization ?? '').split(/\s+/, 2);
    const grant = /^(bearer|token)$/i.test(scheme ?? '') ? state.tokens.get(value ?? '') : undefined;
    if (!headers.authorization) return restError(401, 'Requires authentication');
    if (!grant) return restError(401, 'Bad credentials');
    const user = state.users.get(grant.userId)!;
    if (method !== 'GET') return restError(404, 'Not Found');
    if (path === '/user') return json(200, userWire(user));
    if (path === '/user/emails') {
      if (state.emailsRefusal) return restError(state.emailsRefusal.status, state.emailsRefusal.message);
      const scopes = grant.scope.split(/\s+/);
      // a token without the scope is told the resource does not exist
      if (!scopes.includes('user:email') && !scopes.includes('user')) return restError(404, 'Not Found');
      return json(200, emailsWire(user));
    }
    return restError(404, 'Not Found');
  };

  const route = (method: string, rawPath: string, params: Record<string, string>, headers: IncomingMessage['headers']): Answer => {
    const accept = headers.accept;
    if (rawPath.startsWith(`${API_PREFIX}/`)) return api(method, rawPath.slice(API_PREFIX.length), headers);
    if (method === 'POST' && rawPath === '/login/device/code') return deviceCode(accept, params);
    if (method === 'POST' && rawPath === '/login/oauth/access_token') return accessTokenFor(accept, params);
    return json(404, { error: 'Not Found' });
  };

  const take = <T extends { remaining: number; path: string | null }>(list: T[], path: string): T | null => {
    const hit = list.find((f) => f.remaining > 0 && (f.path === null || path.includes(f.path)));
    if (hit) hit.remaining -= 1;
    return hit ?? null;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? '/', 'http://fake');
    const method = req.method ?? 'GET';
    const params = { ...Object.fromEntries(url.searchParams), ...parseBody(req.headers['content-type'], Buffer.concat(chunks).toString('utf8')) };
    const path = url.pathname.startsWith(`${API_PREFIX}/`) ? url.pathname.slice(API_PREFIX.length) : url.pathname;
    const record: RecordedRequest = { method, path, params, headers: { ...req.headers }, at: now(), status: null };
    state.requests.push(record);

    if (take(hangs, path)) {
      hanging.add(res);
      res.on('close', () => hanging.delete(res));
      return;
    }
    const fault = take(faults, path);
    const answer = fault ? unicorn(fault.status) : route(method, url.pathname, params, req.headers);
    record.status = answer.status;
    res.writeHead(answer.status, { 'content-type': answer.contentType });
    res.end(answer.body);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(String(error));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  baseUrl = `http://127.0.0.1:${port}`;

  return {
    githubUrl: baseUrl,
    apiUrl: `${baseUrl}${API_PREFIX}`,
    state,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
