import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TAG_DESCRIPTIONS } from '../../hosts/http/openapi-tags.ts';
import { OpenApiValidator } from '../support/openapi-validator.ts';
import { startApi, type TestApi } from '../support/api.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startApi();
});
afterAll(async () => api?.close());

const EXPECTED = [
  'GET /healthz',
  'GET /readyz',
  'GET /metrics',
  'GET /openapi.json',
  'POST /v1/tenants',
  'POST /v1/tokens',
  'GET /v1/tokens',
  'GET /v1/tokens/self',
  'POST /v1/tokens/self/heartbeat',
  'DELETE /v1/tokens/{token_id}',
  'GET /v1/gpus',
  'GET /v1/marketplace',
  'GET /v1/market/summary',
  'GET /v1/market/history',
  'GET /v1/providers',
  'GET /v1/billing/account',
  'GET /v1/billing/balance',
  'POST /v1/billing/deposits',
  'GET /v1/billing/deposits',
  'GET /v1/billing/ledger',
  'GET /v1/billing/summary',
  'GET /v1/operator/accounts',
  'GET /v1/operator/deposits',
  'POST /v1/billing/deposits/{deposit_id}/confirm',
  'POST /v1/billing/deposits/{deposit_id}/reject',
  'POST /v1/operator/tenants/{tenant_id}/credit',
  'POST /v1/billing/charges',
  'POST /v1/instances',
  'POST /v1/quotes',
  'GET /v1/instances',
  'GET /v1/instances/{instance_id}',
  'POST /v1/instances/{instance_id}/terminate',
  'POST /v1/instances/{instance_id}/reboot',
  'POST /v1/instances/{instance_id}/schedule-removal',
  'DELETE /v1/instances/{instance_id}/schedule-removal',
  'POST /v1/ssh-keys',
  'GET /v1/ssh-keys',
  'GET /v1/ssh-keys/{key_id}',
  'DELETE /v1/ssh-keys/{key_id}',
  'POST /v1/images',
  'GET /v1/images',
  'PATCH /v1/images/{image_id}',
  'DELETE /v1/images/{image_id}',
  'POST /v1/templates',
  'GET /v1/templates',
  'PATCH /v1/templates/{template_id}',
  'DELETE /v1/templates/{template_id}',
  'POST /v1/billing/stop',
  'POST /v1/billing/resume',
  'POST /v1/operator/tenants/{tenant_id}/hold',
  'POST /v1/operator/tenants/{tenant_id}/resume',
  'POST /v1/operator/sweep',
  'POST /v1/operator/sandbox/machines/{instance_id}/lose',
  'POST /v1/operator/sandbox/machines/{instance_id}/preempt',
  'POST /v1/operator/sandbox/offers/{node_id}/price',
  'POST /v1/billing/checkout',
  'POST /v1/billing/checkout/{session_id}/sync',
  'PUT /v1/billing/auto-recharge',
  'GET /v1/billing/budget',
  'PUT /v1/billing/budget',
  'DELETE /v1/billing/budget',
  'DELETE /v1/billing/card',
  'GET /v1/payments/manual/{session_id}',
  'POST /v1/payments/manual/{session_id}/pay',
  'POST /v1/payments/manual/{session_id}/cancel',
  'GET /v1/auth/config',
  'POST /v1/auth/sign-up',
  'POST /v1/auth/confirm-email',
  'POST /v1/auth/resend-code',
  'POST /v1/auth/forgot-password',
  'POST /v1/auth/reset-password',
  'POST /v1/auth/sign-in',
  'POST /v1/auth/new-password',
  'POST /v1/auth/idp/exchange',
  'POST /v1/auth/codehost/device/start',
  'POST /v1/auth/codehost/device/poll',
  'POST /v1/operator/users',
  'GET /v1/identities',
  'DELETE /v1/identities/{identity_id}',
  'PATCH /v1/identities/{identity_id}',
  'POST /v1/invitations',
  'GET /v1/invitations',
  'DELETE /v1/invitations/{invitation_id}',
  'POST /v1/invitations/accept',
  'GET /v1/auth/tenants',
  'POST /v1/auth/switch',
  'POST /v1/volumes',
  'GET /v1/volumes',
  'DELETE /v1/volumes/{volume_id}',
  'GET /auth/authorize',
  'POST /auth/authorize',
  'POST /v1/metering/usage',
  'GET /v1/metering/usage',
  'GET /v1/metering/summary',
  'POST /v1/metering/settle',
  'POST /v1/reservations',
  'GET /v1/reservations',
  'GET /v1/reservations/due',
  'GET /v1/reservations/{reservation_id}',
  'DELETE /v1/reservations/{reservation_id}',
  'POST /v1/webhook-endpoints',
  'GET /v1/webhook-endpoints',
  'GET /v1/webhook-endpoints/{endpoint_id}',
  'DELETE /v1/webhook-endpoints/{endpoint_id}',
  'POST /v1/webhook-endpoints/{endpoint_id}/test',
  'POST /v1/webhook-endpoints/{endpoint_id}/enable',
  'GET /v1/webhook-endpoints/{endpoint_id}/deliveries',
  'POST /v1/spot-claims',
  'GET /v1/spot-claims',
  'GET /v1/spot-claims/{claim_id}',
  'DELETE /v1/spot-claims/{claim_id}',
];

describe('/openapi.json', () => {
  it('is OpenAPI 3.1, version 0.1.0, listing exactly the routes that exist', async () => {
    const res = await api.call('GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.info.version).toBe('0.1.0');
    const listed = Object.entries(res.body.paths as Record<string, object>).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(listed.sort()).toEqual([...EXPECTED].sort());
    expect(api.plane.routes.map((r) => `${r.method.toUpperCase()} ${r.path}`).sort()).toEqual([...EXPECTED].sort());
  });

  it('states each operation security: the scheme plain, the scope it needs beside it, the bootstrap alternative, or none', async () => {
    const { paths } = (await api.call('GET', '/openapi.json')).body;
    expect(paths['/v1/tenants'].post.security).toEqual([]);
    expect(paths['/healthz'].get.security).toEqual([]);
    expect(paths['/v1/tokens'].post.security).toEqual([{ bearerAuth: [] }, {}]);
    expect(paths['/v1/tokens'].post['x-required-scope']).toBe('manage');
    expect(paths['/v1/tokens'].post.description).toMatch(/`manage` scope/);
    expect(paths['/v1/tokens'].get.security).toEqual([{ bearerAuth: [] }]);
    expect(paths['/v1/tokens'].get).not.toHaveProperty('x-required-scope');
    expect(paths['/v1/tokens/{token_id}'].delete.responses['204']).toBeDefined();
    expect(paths['/v1/tokens'].post.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/TokenCreate');
    expect(paths['/v1/gpus'].get.security).toEqual([{ bearerAuth: [] }]);
    expect(paths['/v1/gpus'].get['x-required-scope']).toBe('read');
    expect(paths['/v1/marketplace'].get.security).toEqual([{ bearerAuth: [] }]);
    expect(paths['/v1/market/summary'].get.security).toEqual([]);
  });

  it("classes every operation that needs manage: the caller's own things, root's, or the whole tenant's (not a member's)", async () => {
    const { paths } = (await api.call('GET', '/openapi.json')).body as { paths: Record<string, Record<string, Record<string, unknown>>> };
    const classes: Record<'own' | 'root' | 'tenant', string[]> = { own: [], root: [], tenant: [] };
    for (const [path, ops] of Object.entries(paths)) {
      for (const [method, op] of Object.entries(ops)) {
        if (op['x-required-scope'] !== 'manage') continue;
        const kind = op['x-requires-root'] ? 'root' : op['x-requires-tenant-manage'] ? 'tenant' : 'own';
        classes[kind].push(`${method.toUpperCase()} ${path}`);
        if (kind === 'tenant') expect(op.description).toMatch(/not a member's console session nor a token under one/);
      }
    }
    // a new route that needs manage lands in one of these on purpose (docs/decisions.md, "One tree of authority")
    expect(Object.fromEntries(Object.entries(classes).map(([kind, ops]) => [kind, ops.sort()]))).toEqual({
      // tokens within the caller's own limits; keys, images and templates another saved are 403 MADE_BY_ANOTHER; the
      // sign-in routes link a person only for a root bearer (the use case checks it: without a bearer they are public)
      own: [
        'DELETE /v1/images/{image_id}', 'DELETE /v1/ssh-keys/{key_id}', 'DELETE /v1/templates/{template_id}',
        'DELETE /v1/webhook-endpoints/{endpoint_id}', 'PATCH /v1/images/{image_id}', 'PATCH /v1/templates/{template_id}',
        'POST /v1/auth/codehost/device/poll', 'POST /v1/auth/idp/exchange', 'POST /v1/auth/new-password', 'POST /v1/auth/sign-in',
        'POST /v1/images', 'POST /v1/ssh-keys', 'POST /v1/templates', 'POST /v1/tokens', 'POST /v1/webhook-endpoints/{endpoint_id}/test',
      ],
      root: [
        'DELETE /v1/identities/{identity_id}', 'DELETE /v1/invitations/{invitation_id}', 'GET /v1/invitations', 'PATCH /v1/identities/{identity_id}', 'POST /v1/invitations',
      ],
      // taking an endpoint over is registering it anew (and, not root, only what its own subtree registered)
      tenant: ['GET /v1/identities', 'POST /v1/webhook-endpoints', 'POST /v1/webhook-endpoints/{endpoint_id}/enable'],
    });
  });

  it('declares every tag its operations use, each with a description written for it', async () => {
    const doc = (await api.call('GET', '/openapi.json')).body;
    const used = new Set(api.plane.routes.flatMap((route) => route.tags));
    expect(doc.tags.map((tag: { name: string }) => tag.name).sort()).toEqual([...used].sort());
    // a tag new to the route table gets a sentence in hosts/http/openapi-tags.ts
    expect([...used].filter((tag) => !(tag in TAG_DESCRIPTIONS))).toEqual([]);
    expect(doc.info.contact).toEqual({ name: expect.any(String) });
  });

  it('has one type per schema: a nullable field is anyOf with a null branch, never a type array', async () => {
    const doc = (await api.call('GET', '/openapi.json')).body;
    const arrays: string[] = [];
    JSON.stringify(doc, function (key, value) {
      if (key === 'type' && Array.isArray(value)) arrays.push(JSON.stringify(this));
      return value;
    });
    expect(arrays).toEqual([]);
    expect(doc.components.schemas.TokenOut.properties.name).toEqual({ anyOf: [{ type: 'string' }, { type: 'null' }] });
  });

  it('describes the market routes with their real response schemas and typed query parameters', async () => {
    const doc = (await api.call('GET', '/openapi.json')).body;
    const schemaOf = (path: string, status: string) => doc.paths[path].get.responses[status].content['application/json'].schema.$ref;
    expect(schemaOf('/v1/gpus', '200')).toBe('#/components/schemas/GpuSearchOut');
    expect(schemaOf('/v1/marketplace', '200')).toBe('#/components/schemas/MarketplaceOut');
    expect(schemaOf('/v1/market/summary', '200')).toBe('#/components/schemas/MarketSummaryOut');
    expect(schemaOf('/v1/market/summary', '503')).toBe('#/components/schemas/ErrorOut');
    const node = doc.components.schemas.NodeOut;
    expect(node.required).toEqual(expect.arrayContaining(['id', 'price_per_hour_cents', 'price_per_gpu_hour_cents', 'supported_operations']));
    const params = Object.fromEntries(doc.paths['/v1/gpus'].get.parameters.map((p: any) => [p.name, p]));
    expect(params.gpu_count.schema).toMatchObject({ type: 'integer', minimum: 1 });
    expect(params.min_vram_gb.schema).toMatchObject({ type: 'number', minimum: 0 });
    expect(params.mig.schema).toMatchObject({ type: 'boolean' });
    expect(params.max_price_per_gpu_hour.schema).toMatchObject({ type: 'number', minimum: 0 });
    expect(Object.values(params).every((p: any) => p.required !== true)).toBe(true);
    const marketplaceParams = doc.paths['/v1/marketplace'].get.parameters.map((p: any) => p.name);
    expect(marketplaceParams).toContain('recent_limit');
    expect(doc.components.schemas.MarketSummaryOut.properties.families.items.$ref).toBe('#/components/schemas/MarketFamilyOut');
  });

  it('is the same schema that validates: a documented enum value is accepted, others refused', async () => {
    const { components } = (await api.call('GET', '/openapi.json')).body;
    const scopes = components.schemas.TokenCreate.properties.scopes.items.enum;
    expect(scopes).toEqual(['read', 'rent', 'manage', 'billing']);
  });

  it('says a USD amount sent as a number has at most two decimals (multipleOf 0.01), as the server refuses more', async () => {
    const doc = (await api.call('GET', '/openapi.json')).body;
    /** Every schema of the document that is a USD amount: a number, or text of at most two decimals. */
    const usd: { where: string; schema: Record<string, any> }[] = [];
    const walk = (node: unknown, where: string): void => {
      if (!node || typeof node !== 'object') return;
      const schema = node as Record<string, any>;
      const text = schema.anyOf?.find((branch: Record<string, any>) => branch.type === 'string' && /\\d\{1,2\}\)\?\$$/.test(branch.pattern ?? ''));
      if (text && schema.anyOf.some((branch: Record<string, any>) => branch.type === 'number')) usd.push({ where, schema });
      for (const [key, value] of Object.entries(schema)) walk(value, `${where}/${key}`);
    };
    walk(doc, '#');
    expect(usd.length).toBeGreaterThanOrEqual(10);
    for (const { where, schema } of usd) expect(schema.anyOf.find((branch: Record<string, any>) => branch.type === 'number'), where).toMatchObject({ multipleOf: 0.01 });

    // the validator the tests check answers with reads multipleOf exactly: 19.99 / 0.01 is not a whole number in floating point
    const validator = new OpenApiValidator(doc);
    const amount = doc.components.schemas.TokenCreate.properties.spend_limit_usd;
    for (const ok of [19.99, 0.07, 0.3, 1_234.56, 25, '19.99']) expect(validator.valid(amount, ok), String(ok)).toBe(true);
    for (const refused of [12.345, 0.001, '12.345']) expect(validator.valid(amount, refused), String(refused)).toBe(false);
    // and the server agrees with it
    const { token } = await api.newTenant();
    for (const [limit, status] of [[12.345, 422], [19.99, 201], [0.07, 201]] as const) {
      const res = await api.call('POST', '/v1/tokens', { token, body: { scopes: ['read'], spend_limit_usd: limit } });
      expect(res.status, `${limit}: ${JSON.stringify(res.body)}`).toBe(status);
      if (status === 201) expect(res.body.spend_limit_cents).toBe(Math.round(limit * 100));
    }
  });

  it('declares the statuses each operation can answer, from its access, inputs and domain outcomes', async () => {
    const { paths } = (await api.call('GET', '/openapi.json')).body;
    const statuses = (path: string, method: string) => Object.keys(paths[path][method].responses).sort();
    expect(statuses('/v1/instances/{instance_id}/schedule-removal', 'post')).toEqual(['200', '400', '401', '403', '404', '409', '413', '415', '422', '429', '431', '503', 'default']);
    expect(statuses('/v1/instances/{instance_id}/schedule-removal', 'delete')).toEqual(['200', '400', '401', '403', '404', '409', '422', '429', '431', '503', 'default']);
    expect(statuses('/v1/billing/charges', 'post')).toEqual(['201', '400', '401', '404', '413', '415', '422', '429', '431', '503', 'default']);
    expect(statuses('/v1/instances', 'post')).toEqual(['200', '201', '400', '401', '402', '403', '404', '409', '413', '415', '422', '429', '431', '503', 'default']);
    // terminating twice answers the instance again: no 409
    expect(statuses('/v1/instances/{instance_id}/terminate', 'post')).toEqual(['200', '400', '401', '403', '404', '422', '429', '431', '503', 'default']);
    // a scope-less bearer route cannot answer 403 unless its own outcome says so
    expect(statuses('/v1/tokens/self', 'get')).toEqual(['200', '401', '429', '431', '503', 'default']);
    expect(statuses('/v1/tokens/{token_id}', 'delete')).toEqual(['204', '400', '401', '403', '404', '422', '429', '431', '503', 'default']);
    expect(statuses('/healthz', 'get')).toEqual(['200', '431', 'default']);
    expect(statuses('/v1/billing/card', 'delete')).toEqual(['200', '401', '403', '429', '431', '503', 'default']);
    expect(statuses('/v1/billing/checkout/{session_id}/sync', 'post')).toContain('503');
    // every route that reads the database may answer 503 for it, with Retry-After; those that never read it do not
    const retryAfter = paths['/v1/tokens/self'].get.responses['503'].headers['Retry-After'];
    expect(retryAfter.schema).toMatchObject({ type: 'integer', minimum: 1 });
    expect(retryAfter.required).not.toBe(true); // a cloud's 503 has none
    expect(statuses('/openapi.json', 'get')).not.toContain('503');
    expect(statuses('/readyz', 'get')).toContain('503');
  });

  it('gives every operation a success status', async () => {
    const { paths } = (await api.call('GET', '/openapi.json')).body;
    for (const [path, operations] of Object.entries(paths as Record<string, Record<string, { responses: object }>>)) {
      for (const [method, operation] of Object.entries(operations)) {
        expect({ path, method, success: Object.keys(operation.responses).some((s) => /^[23]\d\d$/.test(s)) }).toEqual({ path, method, success: true });
      }
    }
  });

  it('declares the headers answers carry: RateLimit on limited routes, Retry-After on 429, Idempotent-Replayed on a rental', async () => {
    const doc = (await api.call('GET', '/openapi.json')).body;
    const headerNames = (path: string, method: string, status: string) => {
      const headers = doc.paths[path][method].responses[status].headers ?? {};
      return Object.keys(headers).sort();
    };
    expect(headerNames('/v1/tokens/self', 'get', '200')).toEqual(['RateLimit', 'RateLimit-Policy']);
    expect(headerNames('/v1/tokens/self', 'get', '401')).toEqual(['RateLimit', 'RateLimit-Policy']);
    expect(headerNames('/v1/tokens/self', 'get', '429')).toEqual(['RateLimit', 'RateLimit-Policy', 'Retry-After']);
    expect(headerNames('/v1/operator/accounts', 'get', '200')).toEqual(['RateLimit', 'RateLimit-Policy']);
    expect(headerNames('/v1/instances', 'post', '201')).toEqual(['Idempotent-Replayed', 'RateLimit', 'RateLimit-Policy']);
    expect(headerNames('/healthz', 'get', '200')).toEqual([]);
    expect(headerNames('/v1/tokens/self', 'get', '431')).toEqual([]);
    expect(headerNames('/v1/payments/manual/{session_id}/pay', 'post', '303')).toEqual(['Location', 'RateLimit', 'RateLimit-Policy']);
    const retryAfter = doc.components.headers['Retry-After'];
    expect(retryAfter).toMatchObject({ required: true, schema: { type: 'integer' } });
    expect(doc.paths['/v1/payments/manual/{session_id}'].get.responses['200'].content).toHaveProperty('text/html');
  });
});
