import express from 'express';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createControlPlane } from '../../hosts/composition/control-plane.ts';
import { freshPglite } from '../support/database.ts';
import { OPERATOR_KEY, startApi, type TestApi } from '../support/api.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startApi();
});
afterAll(async () => api?.close());

describe('bad requests never reach a 500', () => {
  it('answers malformed JSON with 400 {detail}', async () => {
    const res = await api.call('POST', '/v1/tokens', { rawBody: '{"tenant_id": ' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ detail: expect.stringMatching(/not valid JSON/) });
  });

  it('answers a body that is not an object, or not JSON at all, with 4xx {detail}', async () => {
    const scalar = await api.call('POST', '/v1/tokens', { rawBody: '"just a string"' });
    expect(scalar.status).toBe(400);
    const array = await api.call('POST', '/v1/tenants', { rawBody: '[1,2]' });
    expect(array.status).toBe(422);
    expect(array.body.errors).toEqual([{ loc: ['body'], msg: expect.stringMatching(/JSON object/) }]);
  });

  it('refuses a body sent with another content type than JSON with 415, on routes that take a body', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const res = await api.call('POST', '/v1/tenants', { rawBody: type.endsWith('urlencoded') ? 'name=acme' : '{"name":"acme"}', headers: { 'content-type': type } });
      expect(res.status).toBe(415);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.body.detail).toMatch(/Content-Type: application\/json/);
    }
    // fetch sends a string body as text/plain unless told otherwise
    const untyped = await fetch(`${api.baseUrl}/v1/tenants`, { method: 'POST', body: '{"name":"acme"}' });
    expect(untyped.status).toBe(415);
    // JSON with a charset, or a +json type, is JSON
    const charset = await api.call('POST', '/v1/tenants', { body: { name: 'acme' }, headers: { 'content-type': 'application/json; charset=utf-8' } });
    expect(charset.status).toBe(201);
    // no body at all on a route whose body is optional is not a content-type question
    const { token } = await api.newTenant();
    const stop = await fetch(`${api.baseUrl}/v1/billing/stop`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' } });
    expect(stop.status).toBe(200);
    // a route without a body ignores one, whatever it is: it is never read
    const resume = await api.call('POST', '/v1/billing/resume', { token, rawBody: 'not json', headers: { 'content-type': 'text/plain' } });
    expect(resume.status).toBe(200);
    const malformed = await api.call('POST', '/v1/billing/resume', { token, rawBody: '{"broken": ' });
    expect(malformed.status).toBe(200);
    // a body is read only once the caller is let in: an unauthenticated malformed body is a 401, not a 400
    expect((await api.call('POST', '/v1/billing/deposits', { rawBody: '{"broken": ' })).status).toBe(401);
  });

  it('refuses a body over 100 kB with 413', async () => {
    const res = await api.call('POST', '/v1/tenants', { body: { name: 'x'.repeat(200_000) } });
    expect(res.status).toBe(413);
    expect(res.body.detail).toMatch(/100 kB/);
  });

  it("keeps an idle connection open longer than a balancer's idle timeout, and says so (Keep-Alive: timeout=65)", async () => {
    const res = await fetch(`${api.baseUrl}/healthz`);
    await res.text();
    expect(res.headers.get('keep-alive')).toBe('timeout=65');
  });

  it('answers unknown routes with 404 {detail} and a wrong method with 405 and Allow', async () => {
    const missing = await api.call('GET', '/v1/nothing-here');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ detail: expect.stringMatching(/no route/) });
    const wrong = await api.call('PATCH', '/v1/tokens/self');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toMatch(/GET/);
  });

  it('answers OPTIONS with 204, Allow and no body on known paths, 404 JSON elsewhere', async () => {
    const tokens = await fetch(`${api.baseUrl}/v1/tokens`, { method: 'OPTIONS' });
    expect(tokens.status).toBe(204);
    expect(tokens.headers.get('allow')?.split(', ').sort()).toEqual(['GET', 'HEAD', 'OPTIONS', 'POST']);
    expect(await tokens.text()).toBe('');
    expect(tokens.headers.get('content-type')).toBeNull();
    const instance = await fetch(`${api.baseUrl}/v1/instances/ins_abc/schedule-removal`, { method: 'OPTIONS' });
    expect(instance.status).toBe(204);
    expect(instance.headers.get('allow')?.split(', ').sort()).toEqual(['DELETE', 'OPTIONS', 'POST']);
    const unknown = await fetch(`${api.baseUrl}/v1/nothing-here`, { method: 'OPTIONS' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ detail: expect.stringMatching(/no route/) });
    // 405 names the same methods
    const wrong = await api.call('PUT', '/v1/tokens');
    expect(wrong.headers.get('allow')?.split(', ').sort()).toEqual(['GET', 'HEAD', 'OPTIONS', 'POST']);
  });

  it('answers an over-long URL with 431 and a JSON {detail}, not a reset or an empty answer', async () => {
    for (const length of [20_000, 200_000]) {
      const res = await fetch(`${api.baseUrl}/v1/gpus?gpu_type=${'x'.repeat(length)}`);
      expect(res.status).toBe(431);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toEqual({ detail: expect.stringMatching(/URL/) });
    }
    expect((await api.call('GET', '/healthz')).status).toBe(200); // the server carries on
  });

  it('answers a path segment that is not valid percent-encoding with 400 {detail}', async () => {
    const res = await api.call('DELETE', '/v1/tokens/%E0%A4%A');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ detail: expect.stringMatching(/percent-encod/) });
  });
});

describe('rate limits', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi({ rateLimits: { publicPerMinute: 5, perTokenPerMinute: 8 } });
  });
  afterAll(async () => api?.close());

  it('limits public routes per address with 429 and Retry-After', async () => {
    const results = [];
    for (let i = 0; i < 7; i++) results.push(await api.call('GET', '/openapi.json'));
    expect(results.slice(0, 5).every((r) => r.status === 200)).toBe(true);
    const limited = results[6]!;
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.body).toEqual({ detail: expect.stringMatching(/too many requests/) });
    // liveness probes are never limited
    expect((await api.call('GET', '/healthz')).status).toBe(200);
  });

  it('counts failed authentication against the address', async () => {
    const other = await startApi({ rateLimits: { publicPerMinute: 3, perTokenPerMinute: 1000 } });
    try {
      const statuses = [];
      for (let i = 0; i < 5; i++) statuses.push((await other.call('GET', '/v1/tokens/self', { token: `gcp_tok_guess${i}_${'x'.repeat(40)}` })).status);
      expect(statuses).toEqual([401, 401, 401, 429, 429]);
    } finally {
      await other.close();
    }
  });

  it('limits each token on its own', async () => {
    const plane = api.plane;
    const first = await plane.services.tenancy.createTenant('a');
    const second = await plane.services.tenancy.createTenant('b');
    const a = await plane.services.tenancy.issueToken({ kind: 'bootstrap', tenantId: first.tenant.id, secret: first.bootstrapSecret }, {});
    const b = await plane.services.tenancy.issueToken({ kind: 'bootstrap', tenantId: second.tenant.id, secret: second.bootstrapSecret }, {});
    const statuses = [];
    for (let i = 0; i < 9; i++) statuses.push((await api.call('GET', '/v1/tokens/self', { token: a.secret })).status);
    expect(statuses.slice(0, 8)).toEqual(Array(8).fill(200));
    expect(statuses[8]).toBe(429);
    expect((await api.call('GET', '/v1/tokens/self', { token: b.secret })).status).toBe(200);
  });
});

describe('operator rate limits', () => {
  const OPERATOR = { 'x-service-operator-key': OPERATOR_KEY };

  it('gives operators with a valid key their own budget, apart from the public one of their address', async () => {
    const api = await startApi({ rateLimits: { publicPerMinute: 3, perTokenPerMinute: 1000, operatorPerMinute: 12 } });
    try {
      const statuses = [];
      for (let i = 0; i < 13; i++) statuses.push((await api.call('GET', '/v1/operator/accounts', { headers: OPERATOR })).status);
      expect(statuses).toEqual([...Array(12).fill(200), 429]);
      // the public budget of the same address is untouched
      expect((await api.call('GET', '/openapi.json')).status).toBe(200);
      const headers = (await api.call('GET', '/openapi.json')).headers;
      expect(headers.get('ratelimit-policy')).toMatch(/^3;w=60/);
    } finally {
      await api.close();
    }
  });

  it('counts failed operator keys against the public per-address limit', async () => {
    const api = await startApi({ rateLimits: { publicPerMinute: 3, perTokenPerMinute: 1000, operatorPerMinute: 1000 } });
    try {
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await api.call('GET', '/v1/operator/accounts', { headers: { 'x-service-operator-key': `wrong-key-${i}-0123456789` } })).status);
      expect(statuses).toEqual([401, 401, 401, 429]);
      expect((await api.call('GET', '/openapi.json')).status).toBe(429); // the same address budget
      expect((await api.call('GET', '/v1/operator/accounts', { headers: OPERATOR })).status).toBe(200); // a valid key is not locked out
    } finally {
      await api.close();
    }
  });

  it('defaults to 600 a minute for operators', async () => {
    const api = await startApi({ rateLimits: { publicPerMinute: 2, perTokenPerMinute: 1000 } });
    try {
      const res = await api.call('GET', '/v1/operator/accounts', { headers: OPERATOR });
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-policy')).toMatch(/^600;w=60/);
    } finally {
      await api.close();
    }
  });
});

describe('operator keys', () => {
  it('says that no operator keys are configured, and how to set them, when there are none', async () => {
    const api = await startApi({ operatorKeys: [] });
    try {
      for (const headers of [{ 'x-service-operator-key': OPERATOR_KEY }, {}] as Record<string, string>[]) {
        const res = await api.call('GET', '/v1/operator/accounts', { headers });
        expect(res.status).toBe(401);
        expect(res.body.detail).toMatch(/no operator keys are configured/);
        expect(res.body.detail).toMatch(/OPERATOR_KEYS/);
      }
    } finally {
      await api.close();
    }
  });

  it('says the key is wrong when keys are configured', async () => {
    const res = await api.call('GET', '/v1/operator/accounts', { headers: { 'x-service-operator-key': 'not-the-key-0123456789' } });
    expect(res.status).toBe(401);
    expect(res.body.detail).toMatch(/missing or wrong operator key/);
  });
});

describe('embedding', () => {
  it('mounts the control plane router under a prefix of another Express app', async () => {
    const plane = await createControlPlane(
      { storage: freshPglite().target, operatorKeys: [], rateLimits: { publicPerMinute: 100, perTokenPerMinute: 100 }, logLevel: 'silent' },
      { logger: pino({ level: 'silent' }) },
    );
    const host = express();
    host.get('/', (_req, res) => {
      res.send('host app');
    });
    host.use('/gpu', plane.router);
    const server = host.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      expect(await (await fetch(`${base}/`)).text()).toBe('host app');
      const created = await fetch(`${base}/gpu/v1/tenants`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'embedded' }),
      });
      expect(created.status).toBe(201);
      const unauth = await fetch(`${base}/gpu/v1/tokens/self`);
      expect(unauth.status).toBe(401);
      expect(await unauth.json()).toEqual({ detail: expect.any(String) });
    } finally {
      server.close();
      await plane.close();
    }
  });
});
