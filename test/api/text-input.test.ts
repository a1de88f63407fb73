import express from 'express';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorHandler } from '../../hosts/http/error-handler.ts';
import { OPERATOR_KEY, startApi, type TestApi } from '../support/api.ts';

const OPERATOR = { 'x-service-operator-key': OPERATOR_KEY };
const NUL = '\u0000';
const LONE_SURROGATE = '\ud800';

/** Every line the server logs, to check what reaches them. */
const logLines: string[] = [];
const logger = pino({ level: 'info' }, { write: (line: string) => void logLines.push(line) });

let api: TestApi;
let tenant: { tenantId: string; token: string; tokenId: string };
beforeAll(async () => {
  api = await startApi({}, { logger });
  tenant = await api.newTenant();
  const credit = await api.call('POST', `/v1/operator/tenants/${tenant.tenantId}/credit`, { headers: OPERATOR, body: { amount_usd: 100, reason: 'funds' } });
  expect(credit.status).toBe(201);
});
afterAll(async () => api?.close());

/** One request per string field the API stores or searches, with `bad` inside that field. */
const requests = (bad: string) => {
  const t = () => tenant;
  return [
    { field: ['body', 'name'], call: () => api.call('POST', '/v1/tenants', { body: { name: `acme${bad}` } }) },
    { field: ['body', 'name'], call: () => api.call('POST', '/v1/tokens', { token: t().token, body: { name: `ci${bad}` } }) },
    { field: ['body', 'name'], call: () => api.call('POST', '/v1/instances', { token: t().token, body: { node_id: 'sandbox:100001', name: `box${bad}`, termination_hours: 1 } }) },
    {
      field: ['body', 'idempotency_key'],
      call: () => api.call('POST', '/v1/instances', { token: t().token, body: { node_id: 'sandbox:100001', idempotency_key: `k${bad}`, termination_hours: 1 } }),
    },
    { field: ['body', 'reference'], call: () => api.call('POST', '/v1/billing/deposits', { token: t().token, body: { amount_usd: 5, reference: `wire${bad}` } }) },
    { field: ['body', 'reason'], call: () => api.call('POST', `/v1/operator/tenants/${t().tenantId}/hold`, { headers: OPERATOR, body: { reason: `fraud${bad}` } }) },
    { field: ['body', 'reason'], call: () => api.call('POST', '/v1/billing/stop', { token: t().token, body: { reason: `oops${bad}` } }) },
    { field: ['body', 'reason'], call: () => api.call('POST', `/v1/operator/tenants/${t().tenantId}/credit`, { headers: OPERATOR, body: { amount_usd: 1, reason: `gift${bad}` } }) },
    { field: ['body', 'reason'], call: () => api.call('POST', '/v1/billing/charges', { headers: OPERATOR, body: { tenant_id: t().tenantId, amount_usd: 1, reason: `fee${bad}` } }) },
    { field: ['query', 'gpu_type'], call: () => api.call('GET', `/v1/gpus?gpu_type=${encodeURIComponent(`H100${bad}`)}`, { token: t().token }) },
    { field: ['query', 'extra_filters'], call: () => api.call('GET', `/v1/gpus?extra_filters=${encodeURIComponent(`a=b${bad}`)}`, { token: t().token }) },
    { field: ['path', 'token_id'], call: () => api.call('DELETE', `/v1/tokens/${encodeURIComponent(`tok_${bad}`)}`, { token: t().token }) },
  ];
};

describe('text the database cannot store exactly', () => {
  it('refuses a NUL character in any string field with 422 naming the field, and logs no SQL', async () => {
    logLines.length = 0;
    for (const { field, call } of requests(NUL)) {
      const res = await call();
      expect({ field, status: res.status }).toEqual({ field, status: 422 });
      expect(res.body.errors).toContainEqual({ loc: field, msg: expect.stringMatching(/NUL/) });
    }
    expect(logLines.join('\n')).not.toMatch(/insert into|update \S+ set|select .* from|"level":50/i);
  });

  it('refuses lone UTF-16 surrogates in text the same way', async () => {
    const bodyFields = requests(LONE_SURROGATE).filter((r) => r.field[0] === 'body');
    for (const { field, call } of bodyFields) {
      const res = await call();
      expect({ field, status: res.status }).toEqual({ field, status: 422 });
      expect(res.body.errors).toContainEqual({ loc: field, msg: expect.stringMatching(/surrogate/) });
    }
  });

  it('still stores well-formed text with emoji, accents and other scripts as sent', async () => {
    const name = 'Café 🚀 東京 \u{1F600}';
    const res = await api.call('POST', '/v1/tenants', { body: { name } });
    expect(res.status).toBe(201);
    expect(res.body.name).toBe(name);
  });
});

describe('query parameters', () => {
  it('refuses a repeated parameter with 422 naming it', async () => {
    const res = await api.call('GET', '/v1/billing/ledger?limit=1&limit=2', { token: tenant.token });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([{ loc: ['query', 'limit'], msg: expect.stringMatching(/more than once/) }]);
    expect(res.body.detail).toMatch(/limit/);
  });
});

describe('USD amounts in bodies', () => {
  it('refuses surrounding spaces and leading zeros, and keeps "0.50" valid', async () => {
    for (const amount of ['00005.00', ' 5', '5 ']) {
      const res = await api.call('POST', '/v1/billing/deposits', { token: tenant.token, body: { amount_usd: amount } });
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual([{ loc: ['body', 'amount_usd'], msg: expect.stringMatching(/spaces|leading zeros/) }]);
    }
    const ok = await api.call('POST', '/v1/billing/deposits', { token: tenant.token, body: { amount_usd: '0.50' } });
    expect(ok.status).toBe(201);
    expect(ok.body.amount_cents).toBe(50);
  });
});

describe('the error log', () => {
  it('records a database failure by its driver code and a redacted message, never SQL text or values', async () => {
    const secret = 'value-that-must-not-be-logged';
    const em = api.plane.storage.orm.em.fork();
    const failure = await em.execute(`select cast(? as integer) as n`, [secret]).then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(Error);
    expect(String((failure as Error).message)).toContain(secret); // the database echoes values in its messages

    const lines: string[] = [];
    const app = express();
    app.get('/boom', () => {
      throw failure;
    });
    app.use(errorHandler(pino({ level: 'info' }, { write: (line: string) => void lines.push(line) })));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/boom`);
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({ detail: expect.any(String) });
    } finally {
      server.close();
    }
    const logged = lines.join('\n');
    expect(logged).toMatch(/request failed/);
    expect(logged).toMatch(/"code":"22/); // PostgreSQL's SQLSTATE class 22: data exception
    expect(logged).not.toMatch(/select|cast|value-that-must-not-be-logged/i);
  });
});
