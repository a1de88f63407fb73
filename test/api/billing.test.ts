import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR_KEY, startApi, type TestApi } from '../support/api.ts';

let api: TestApi;
const op = { 'x-service-operator-key': OPERATOR_KEY };

beforeAll(async () => {
  api = await startApi();
});
afterAll(() => api.close());

const deposit = async (token: string, amount: unknown, reference?: string) =>
  api.call('POST', '/v1/billing/deposits', { token, body: { amount_usd: amount, ...(reference && { reference }) } });
const balance = async (token: string) => (await api.call('GET', '/v1/billing/balance', { token })).body;
const ledgerSum = async (token: string) =>
  ((await api.call('GET', '/v1/billing/ledger', { token })).body as { amount_cents: number }[]).reduce((sum, e) => sum + e.amount_cents, 0);

describe('the account', () => {
  it('starts empty and open, with every AccountOut field', async () => {
    const { token, tenantId } = await api.newTenant();
    const res = await api.call('GET', '/v1/billing/account', { token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      tenant_id: tenantId,
      balance_cents: 0,
      owed_cents: 0,
      available_cents: 0,
      burn_cents_per_hour: 0,
      stops_at: null,
      paid_to_removal: false,
      rentals: 'open',
      running_machines: 0,
      pause: null,
      card: null,
      auto_recharge: { enabled: false, threshold_cents: 0, amount_cents: 0, last_error: null, payments_last_24h: 0, max_payments_per_24h: 3 },
      payments: { card: true, bank_transfer: true },
      budget: null,
    });
    expect(await balance(token)).toEqual({ tenant_id: tenantId, balance_cents: 0, owed_cents: 0, available_cents: 0 });
  });

  it('needs the billing scope', async () => {
    const { token } = await api.newTenant();
    const reader = await api.call('POST', '/v1/tokens', { token, body: { scopes: ['read'] } });
    for (const path of ['/v1/billing/account', '/v1/billing/balance', '/v1/billing/ledger', '/v1/billing/deposits', '/v1/billing/summary']) {
      expect((await api.call('GET', path, { token: reader.body.token })).status).toBe(403);
      expect((await api.call('GET', path)).status).toBe(401);
    }
  });
});

describe('deposits and the operator back office', () => {
  it('a bank-transfer request credits nothing until an operator confirms it, once', async () => {
    const { token, tenantId } = await api.newTenant();
    const created = await deposit(token, '250.50', 'wire 2026-11-21');
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ tenant_id: tenantId, kind: 'bank_transfer', status: 'pending', amount_cents: 25_050, reference: 'wire 2026-11-21', decided_at: null });
    expect((await balance(token)).balance_cents).toBe(0);

    const pending = await api.call('GET', '/v1/operator/deposits', { headers: op });
    expect(pending.body.map((d: any) => d.id)).toContain(created.body.id);
    const accounts = await api.call('GET', '/v1/operator/accounts', { headers: op });
    expect(accounts.body.find((a: any) => a.tenant_id === tenantId)).toMatchObject({ pending_deposits: 1, balance_cents: 0, breaker: null });

    const confirmed = await api.call('POST', `/v1/billing/deposits/${created.body.id}/confirm`, { headers: op });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toMatchObject({ status: 'confirmed', decided_at: '2026-11-21T12:00:00.000Z' });
    expect((await balance(token)).balance_cents).toBe(25_050);

    const again = await api.call('POST', `/v1/billing/deposits/${created.body.id}/confirm`, { headers: op });
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatch(/already confirmed/);
    expect((await api.call('POST', `/v1/billing/deposits/${created.body.id}/reject`, { headers: op })).status).toBe(409);
    expect((await balance(token)).balance_cents).toBe(25_050);

    const ledger = (await api.call('GET', '/v1/billing/ledger', { token })).body;
    expect(ledger).toEqual([
      expect.objectContaining({ kind: 'deposit', amount_cents: 25_050, balance_after_cents: 25_050, reference: created.body.id }),
    ]);
  });

  it('twenty parallel confirmations of one deposit credit it once', async () => {
    const { token } = await api.newTenant();
    const created = await deposit(token, 40);
    const answers = await Promise.all(Array.from({ length: 20 }, () => api.call('POST', `/v1/billing/deposits/${created.body.id}/confirm`, { headers: op })));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(1);
    expect(answers.filter((r) => r.status === 409)).toHaveLength(19);
    expect((await balance(token)).balance_cents).toBe(4_000);
    expect(await ledgerSum(token)).toBe(4_000);
  });

  it('a rejected deposit credits nothing; the operator list filters by status, oldest first', async () => {
    const { token } = await api.newTenant();
    const first = await deposit(token, 10);
    api.clock.advance(1_000);
    const second = await deposit(token, 20);
    const rejected = await api.call('POST', `/v1/billing/deposits/${first.body.id}/reject`, { headers: op });
    expect(rejected.body).toMatchObject({ status: 'rejected' });
    expect((await balance(token)).balance_cents).toBe(0);
    const listed = (await api.call('GET', '/v1/operator/deposits?status=rejected', { headers: op })).body.map((d: any) => d.id);
    expect(listed).toContain(first.body.id);
    expect(listed).not.toContain(second.body.id);
    const pending = (await api.call('GET', '/v1/operator/deposits', { headers: op })).body;
    const times = pending.map((d: any) => d.created_at);
    expect(times).toEqual([...times].sort());
    expect((await api.call('GET', '/v1/billing/deposits', { token })).body.map((d: any) => d.id)).toEqual([second.body.id, first.body.id]);
    expect((await api.call('GET', '/v1/operator/deposits?status=lost', { headers: op })).status).toBe(422);
  });

  it('an operator credit adds funds at once as a confirmed deposit; a manual charge takes them', async () => {
    const { token, tenantId } = await api.newTenant();
    const credit = await api.call('POST', `/v1/operator/tenants/${tenantId}/credit`, { headers: op, body: { amount_usd: 12.34, reason: 'welcome' } });
    expect(credit.status).toBe(201);
    expect(credit.body).toMatchObject({ kind: 'credit', status: 'confirmed', amount_cents: 1_234, reason: 'welcome' });
    const charge = await api.call('POST', '/v1/billing/charges', { headers: op, body: { tenant_id: tenantId, amount_usd: '2.34', reason: 'support hours' } });
    expect(charge.status).toBe(201);
    expect(charge.body).toMatchObject({ kind: 'charge', amount_cents: -234, balance_after_cents: 1_000, description: 'support hours' });
    expect((await balance(token)).balance_cents).toBe(1_000);
    expect(await ledgerSum(token)).toBe(1_000);
  });

  it('operator routes refuse tenant credentials and wrong keys, and unknown ids answer 404', async () => {
    const { token, tenantId } = await api.newTenant();
    const body = { tenant_id: tenantId, amount_usd: 1, reason: 'x' };
    expect((await api.call('POST', '/v1/billing/charges', { token, body })).status).toBe(401);
    expect((await api.call('POST', '/v1/billing/charges', { body, headers: { 'x-service-operator-key': 'wrong-key-0123456789' } })).status).toBe(401);
    expect((await api.call('GET', '/v1/operator/accounts', { token })).status).toBe(401);
    expect((await api.call('POST', '/v1/billing/deposits/dep_nosuch/confirm', { headers: op })).status).toBe(404);
    expect((await api.call('POST', '/v1/operator/tenants/ten_nosuch/credit', { headers: op, body: { amount_usd: 1, reason: 'x' } })).status).toBe(404);
    expect((await api.call('POST', '/v1/billing/charges', { headers: op, body: { ...body, tenant_id: 'ten_nosuch' } })).status).toBe(404);
    expect((await api.call('POST', '/v1/billing/deposits/not-an-id/confirm', { headers: op })).status).toBe(422);
    expect((await balance(token)).balance_cents).toBe(0);
  });

  it.each([[0], [-5], ['1.001'], ['100000.01'], ['ten'], [null], [true]])('amount_usd %j answers 422 and creates nothing', async (amount) => {
    const { token, tenantId } = await api.newTenant();
    const res = await deposit(token, amount);
    expect(res.status).toBe(422);
    expect(res.body.detail).toContain('amount_usd');
    expect((await api.call('GET', '/v1/billing/deposits', { token })).body).toEqual([]);
    expect((await api.call('POST', `/v1/operator/tenants/${tenantId}/credit`, { headers: op, body: { amount_usd: amount, reason: 'x' } })).status).toBe(422);
    expect((await balance(token)).balance_cents).toBe(0);
  });
});

describe('the ledger', () => {
  it('is append-only in the database itself', async () => {
    const { token, tenantId } = await api.newTenant();
    await api.call('POST', `/v1/operator/tenants/${tenantId}/credit`, { headers: op, body: { amount_usd: 5, reason: 'x' } });
    await expect(api.plane.storage.execute(`update ledger_entries set amount_cents = 1000000 where tenant_id = ?`, [tenantId])).rejects.toThrow(/append-only/);
    await expect(api.plane.storage.execute(`delete from ledger_entries where tenant_id = ?`, [tenantId])).rejects.toThrow(/append-only/);
    expect((await balance(token)).balance_cents).toBe(500);
  });

  it('is summarized by month or ISO week, newest first, with bounds on limit and year', async () => {
    const { token, tenantId } = await api.newTenant();
    const credit = (usd: number) => api.call('POST', `/v1/operator/tenants/${tenantId}/credit`, { headers: op, body: { amount_usd: usd, reason: 'x' } });
    await credit(10);
    api.clock.advance(14 * 86_400_000); // 2026-12-05
    await credit(20);
    await api.call('POST', '/v1/billing/charges', { headers: op, body: { tenant_id: tenantId, amount_usd: 5, reason: 'y' } });
    api.clock.advance(-14 * 86_400_000);

    const monthly = await api.call('GET', '/v1/billing/summary', { token });
    expect(monthly.body).toEqual([
      { period: '2026-12', start: '2026-12-01T00:00:00.000Z', end: '2027-01-01T00:00:00.000Z', credits_cents: 2_000, debits_cents: 500, net_cents: 1_500, entries: 2 },
      { period: '2026-11', start: '2026-11-01T00:00:00.000Z', end: '2026-12-01T00:00:00.000Z', credits_cents: 1_000, debits_cents: 0, net_cents: 1_000, entries: 1 },
    ]);
    const weekly = await api.call('GET', '/v1/billing/summary?granularity=weekly&limit=1', { token });
    expect(weekly.body).toEqual([expect.objectContaining({ period: '2026-W49', start: '2026-11-30T00:00:00.000Z', net_cents: 1_500 })]);
    expect((await api.call('GET', '/v1/billing/summary?year=2025', { token })).body).toEqual([]);
    for (const query of ['limit=0', 'limit=1001', 'granularity=daily', 'year=26', 'year=abc']) {
      const res = await api.call('GET', `/v1/billing/summary?${query}`, { token });
      expect(res.status, query).toBe(422);
    }
    expect((await api.call('GET', '/v1/billing/ledger?limit=1', { token })).body).toHaveLength(1);
    expect((await api.call('GET', '/v1/billing/ledger?limit=0', { token })).status).toBe(422);
  });
});
