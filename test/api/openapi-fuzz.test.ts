import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR_KEY, startApi, type TestApi } from '../support/api.ts';
import { operationsOf, requestFor, type FuzzRequest, type Hints, type OpenApiDoc, type Operation } from '../support/request-fuzz.ts';
import { sshKeygen } from '../support/ssh-keys.ts';

const OPERATOR = { 'x-service-operator-key': OPERATOR_KEY };
/** Requests per operation; every operation of the route table gets its share. */
const RUNS_PER_OPERATION = 40;

let api: TestApi;
let doc: OpenApiDoc;
let hints: Hints;
let credentials: { bearer: string; weakBearer: string; operatorKey: string };

/** A world with one of everything the routes take an id of, so that requests reach past validation. */
beforeAll(async () => {
  api = await startApi();
  doc = (await api.call('GET', '/openapi.json')).body;
  const tenant = await api.newTenant();
  const as = { token: tenant.token };
  expect((await api.call('POST', `/v1/operator/tenants/${tenant.tenantId}/credit`, { headers: OPERATOR, body: { amount_usd: 1000, reason: 'fuzz' } })).status).toBe(201);
  const weak = await api.call('POST', '/v1/tokens', { ...as, body: { scopes: ['read'] } });
  const spare = await api.call('POST', '/v1/tokens', { ...as, body: { name: 'to revoke' } });
  const nodes: string[] = (await api.call('GET', '/v1/gpus?limit=3', as)).body.nodes.map((n: { id: string }) => n.id);
  const instance = await api.call('POST', '/v1/instances', { ...as, body: { node_id: nodes[0], termination_hours: 2 } });
  const deposit = await api.call('POST', '/v1/billing/deposits', { ...as, body: { amount_usd: 5 } });
  const checkout = await api.call('POST', '/v1/billing/checkout', { ...as, body: { amount_usd: 5 } });
  const publicKey = sshKeygen('ed25519').publicLine;
  const sshKey = await api.call('POST', '/v1/ssh-keys', { ...as, body: { name: 'fuzz', public_key: publicKey } });
  const image = await api.call('POST', '/v1/images', { ...as, body: { name: 'fuzz', image: 'ubuntu:24.04', registry_username: 'u' } });
  const template = await api.call('POST', '/v1/templates', { ...as, body: { name: 'fuzz', image_id: image.body.id, ssh_key_ids: [sshKey.body.id] } });
  const region: string = (await api.call('GET', '/v1/gpus?limit=1', as)).body.nodes[0].region;
  const volume = await api.call('POST', '/v1/volumes', { ...as, body: { name: 'fuzz', size_gb: 10, provider: 'sandbox', region } });
  const startsAt = new Date(api.clock.now().getTime() + 2 * 3_600_000).toISOString();
  const reservation = await api.call('POST', '/v1/reservations', { ...as, body: { name: 'fuzz', node_id: nodes[1], starts_at: startsAt, hours: 2 } });
  expect([weak.status, spare.status, instance.status, deposit.status, checkout.status, sshKey.status, image.status, template.status, volume.status, reservation.status]).toEqual([201, 201, 201, 201, 201, 201, 201, 201, 201, 201]);
  credentials = { bearer: tenant.token, weakBearer: weak.body.token, operatorKey: OPERATOR_KEY };
  const later = new Date(api.clock.now().getTime() + 3_600_000).toISOString();
  hints = {
    tenant_id: [tenant.tenantId, 'ten_unknown0'],
    token_id: [spare.body.id, 'tok_unknown0'],
    instance_id: [instance.body.id, 'ins_unknown0'],
    deposit_id: [deposit.body.id, 'dep_unknown0'],
    session_id: [checkout.body.session_id, 'mcs_unknown0'],
    node_id: [...nodes, 'sandbox:999999999', 'nowhere:1'],
    amount_usd: [5, '5.00', '0.50', 0.01, 100_000, '00005.00', ' 5', 0],
    threshold_usd: [5, '1.00', null],
    spend_limit_usd: [10, '10.00'],
    termination_hours: [1, 2, 24],
    removal_scheduled_at: [later, '2000-01-01T00:00:00Z'],
    expires_at: [later],
    scopes: [['read'], ['read', 'rent'], ['manage'], ['billing']],
    bootstrap_secret: ['not-the-secret'],
    idempotency_key: ['fuzz-1', 'fuzz-2'],
    enabled: [true, false],
    limit: ['1', '10', '0', '1001', 'x'],
    recent_limit: ['1', '5'],
    year: ['2026', '1999'],
    granularity: ['monthly', 'weekly', 'daily'],
    gpu_type: ['H100', 'rtx 4090'],
    provider: ['sandbox', 'nope'],
    extra_filters: ['reliability>=0.9', 'nonsense'],
    status: ['pending', 'confirmed', 'nope'],
    key_id: [sshKey.body.id, 'key_unknown0'],
    identity_id: ['idn_unknown0', 'not-an-id'],
    invitation_id: ['inv_unknown0', 'not-an-id'],
    role: ['member', 'viewer', 'emperor'],
    code: ['gcpinv_unknown0000000000000', ''],
    image_id: [image.body.id, 'img_unknown0', null],
    template_id: [template.body.id, 'tpl_unknown0'],
    public_key: [publicKey, sshKeygen('ecdsa').publicLine, 'ssh-ed25519 AAAA', sshKeygen('ed25519').privateText],
    image: ['ubuntu:24.04', 'ghcr.io/acme/app:v1', 'Not A Reference', null],
    ssh_key_ids: [[sshKey.body.id], [], ['key_unknown0']],
    volume_ids: [[], ['vol_abc'], [volume.body.id]],
    volume_id: [volume.body.id, 'vol_unknown0'],
    size_gb: [10, 0, 10_001],
    region: [region, 'Atlantis'],
    ports: [[22, 8888], [0], []],
    env: [{ A: '1' }, { '1x': 'y' }],
    reservation_id: [reservation.body.id, 'res_unknown0'],
    claim_id: ['spc_unknown0', 'spc-not-an-id'],
    gpu_count: [1, 2, 0, 65],
    endpoint_id: ['whe_unknown0'],
    url: ['https://93.184.216.34/hook', 'http://10.0.0.1/hook', 'not a url'],
    events: [['instance.running'], [], ['nope']],
    description: ['ops', ''],
    starts_at: [startsAt, later, '2000-01-01T00:00:00Z', 'tomorrow'],
    hours: [1, 2, 0, 721, 1.5],
    search: [{ gpu_type: 'H100' }, { gpu_count: 1, max_price_per_gpu_hour: 50 }, { nope: 1 }],
    max_price_per_gpu_hour: [50, '2.5', 0, -1],
  };
}, 60_000);
afterAll(async () => api?.close());

/** The methods a concrete path answers, as Allow should list them: from the document alone. */
const documentedAllow = (path: string): string[] => {
  const methods = Object.entries(doc.paths)
    .filter(([template]) => matches(template, path))
    .flatMap(([, ops]) => Object.keys(ops).map((m) => m.toUpperCase()));
  if (methods.includes('GET')) methods.push('HEAD');
  return [...new Set([...methods, 'OPTIONS'])].sort();
};

const matches = (template: string, path: string) => new RegExp(`^${template.replace(/\{[a-z_]+\}/g, '[^/]+')}$`).test(path);

/** The operation that answers a method on a concrete path, as the router picks it (HEAD is answered by GET). */
const operationAt = (method: string, path: string): Operation | undefined =>
  operationsOf(doc).find((op) => matches(op.path, path) && (op.method === method || (method === 'HEAD' && op.method === 'GET')));

const isRateLimited = (operation: Operation) => '429' in operation.responses;

const decodes = (path: string): boolean => {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
};

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

async function send(request: FuzzRequest): Promise<Answer> {
  const response = await fetch(`${api.baseUrl}${request.path}`, { method: request.method, headers: request.headers, body: request.body, redirect: 'manual' });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** What the document promises of one answer; a failure names the request so it can be replayed. */
function check(request: FuzzRequest, answer: Answer): void {
  const where = `${request.method} ${request.path.slice(0, 200)} -> ${answer.status} ${answer.text.slice(0, 300)}`;
  const type = answer.headers.get('content-type') ?? '';
  const path = request.path.split('?')[0]!;
  const operation = operationAt(request.method, path);
  if (answer.status === 431) {
    // Node refuses the head before any route is known; every operation documents it
    expect(Object.keys(request.operation.responses), where).toContain('431');
  } else if (!operation && answer.status === 400) {
    // a path that cannot be decoded is malformed whatever the method (the router decodes before it dispatches)
    expect(decodes(path), where).toBe(false);
  } else if (!operation) {
    expect(answer.status, where).toBe(request.method === 'OPTIONS' ? 204 : 405);
    expect(answer.headers.get('allow')?.split(', ').sort(), where).toEqual(documentedAllow(path));
  } else {
    const documented = operation.responses[String(answer.status)];
    expect(documented, `undocumented status for ${operation.method} ${operation.path}: ${where}`).toBeDefined();
    if (answer.text !== '' && answer.status < 400) {
      const declared = Object.keys(documented!.content ?? {});
      expect(declared.some((t) => type.startsWith(t)), `content type ${type} not documented: ${where}`).toBe(true);
    }
    const undecodablePath = answer.status === 400 && !decodes(path);
    if (isRateLimited(operation) && !undecodablePath) {
      expect(answer.headers.get('ratelimit-policy'), `no RateLimit-Policy: ${where}`).toMatch(/^\d+;w=60/);
      expect(answer.headers.get('ratelimit'), `no RateLimit: ${where}`).toMatch(/limit=\d+, remaining=\d+, reset=\d+/);
    }
  }
  if (answer.status >= 400 && request.method !== 'HEAD') {
    expect(type, where).toMatch(/^application\/json/);
    expect(JSON.parse(answer.text), where).toEqual(expect.objectContaining({ detail: expect.any(String) }));
  }
  if (type.startsWith('application/json') && answer.text !== '') expect(() => JSON.parse(answer.text), where).not.toThrow();
}

describe('every answer of every route is what /openapi.json says', () => {
  it('holds for mangled bodies, queries, path ids, methods, content types and credentials', async () => {
    const operations = operationsOf(doc);
    expect(operations.length).toBe(api.plane.routes.length);
    const seen = new Map<string, Set<number>>();
    for (const operation of operations) {
      await fc.assert(
        fc.asyncProperty(requestFor(operation, doc, hints, credentials), async (request) => {
          const answer = await send(request);
          check(request, answer);
          const key = `${operation.method} ${operation.path}`;
          (seen.get(key) ?? seen.set(key, new Set()).get(key)!).add(answer.status);
        }),
        { numRuns: RUNS_PER_OPERATION },
      );
    }
    // the fuzz reached past validation: successes and domain outcomes, not only 4xx at the door
    const all = new Set([...seen.values()].flatMap((s) => [...s]));
    for (const status of [200, 201, 400, 401, 404, 405, 413, 415, 422, 431]) expect(all, `no ${status} seen`).toContain(status);
  }, 180_000);

  it('answers 429 with Retry-After and the RateLimit headers on every limited route once a budget is spent', async () => {
    const small = await startApi({ rateLimits: { publicPerMinute: 2, perTokenPerMinute: 2, operatorPerMinute: 2 } });
    try {
      const tenant = await small.newTenant(); // spends the address budget: two public calls
      const spend = [() => small.call('GET', '/v1/tokens/self', { token: tenant.token }), () => small.call('GET', '/v1/operator/accounts', { headers: OPERATOR })];
      for (const call of spend) for (let i = 0; i < 2; i++) await call();
      for (const operation of operationsOf(doc)) {
        const path = operation.path.replace(/\{([a-z_]+)\}/g, (_, name: string) => String(hints[name]![0]));
        const scheme = Object.keys(operation.security?.[0] ?? {})[0];
        const headers = scheme === 'bearerAuth' ? { authorization: `Bearer ${tenant.token}` } : scheme === 'operatorKey' ? OPERATOR : {};
        const answer = await fetch(`${small.baseUrl}${path}`, { method: operation.method, headers, redirect: 'manual' });
        const text = await answer.text();
        const where = `${operation.method} ${operation.path} -> ${answer.status} ${text}`;
        if (!isRateLimited(operation)) {
          expect(answer.status, where).not.toBe(429);
          continue;
        }
        expect(answer.status, where).toBe(429);
        expect(Number(answer.headers.get('retry-after')), where).toBeGreaterThanOrEqual(1);
        expect(answer.headers.get('ratelimit'), where).toMatch(/remaining=0/);
        expect(answer.headers.get('ratelimit-policy'), where).toMatch(/^2;w=60/);
        expect(JSON.parse(text), where).toEqual({ detail: expect.stringMatching(/too many requests/) });
      }
    } finally {
      await small.close();
    }
  }, 60_000);
});
