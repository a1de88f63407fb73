import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR, rentalWorld, type RentalWorld } from '../support/rentals.ts';
import { startSmtpInbox, type ReceivedMail, type SmtpInbox } from '../support/smtp-inbox.ts';

/**
 * Monthly budgets over HTTP on PostgreSQL with a ManualClock (docs/decisions.md, "Monthly budgets"): the alert
 * percents each told once a month, by mail through a real SMTP server to every person of the tenant and by a
 * budget.threshold_reached webhook to a receiver here, whatever charges them (rentals made in parallel, sweeps run
 * twice at once); the stop at 100 % leaves nothing running, and renting reopens only above a raised budget or in a
 * new month.
 */
const HOUR = 3_600_000;
const PASSWORD = 'Correct-Horse-Battery-9';

let world: RentalWorld;
let inbox: SmtpInbox;
let hooks: Server;
let hooksUrl = '';
const received: { type: string; data: any }[] = [];
let seq = 0;

beforeAll(async () => {
  inbox = await startSmtpInbox();
  hooks = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      received.push({ type: event.type, data: event.data });
      res.writeHead(204).end();
    });
  });
  hooks.listen(0, '127.0.0.1');
  await new Promise((resolve) => hooks.once('listening', resolve));
  hooksUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hooks`;
  world = await rentalWorld(
    {
      secretsKey: randomBytes(32),
      webhooks: { allowHttp: true, delivery: false },
      auth: { mail: { smtpUrl: inbox.url, from: 'gpu-control-plane <no-reply@cp.test>' } },
    },
    { sandbox: { offers: 400 } },
  );
});
afterAll(async () => {
  await world?.close();
  await inbox?.close();
  hooks?.closeAllConnections();
  await new Promise((resolve) => hooks?.close(resolve));
});

const call = (method: string, path: string, token: string, body?: unknown) => world.api.call(method, path, { token, ...(body !== undefined && { body }) });
const sweep = async () => expect((await world.api.call('POST', '/v1/operator/sweep', { headers: OPERATOR })).status).toBe(200);
const settled = () => world.api.plane.services.budgetWatch.idle();
const deliver = () => world.api.plane.services.webhookDeliveries.deliverDue();

/** A tenant a person signed up to (their address gets the alerts), funded by an operator. */
async function personsTenant(usd: number): Promise<{ token: string; tenantId: string; email: string }> {
  const email = `budget.${Date.now().toString(36)}${seq++}@example.com`;
  expect((await world.api.call('POST', '/v1/auth/sign-up', { body: { email, password: PASSWORD } })).status).toBe(200);
  const code = /\b(\d{6})\b/.exec((await inbox.next((m) => m.to.includes(email) && /confirmation/.test(m.subject))).text)![1]!;
  expect((await world.api.call('POST', '/v1/auth/confirm-email', { body: { email, code } })).status).toBe(200);
  const signedIn = await world.api.call('POST', '/v1/auth/sign-in', { body: { email, password: PASSWORD } });
  expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
  const credit = await world.api.call('POST', `/v1/operator/tenants/${signedIn.body.tenant_id}/credit`, { headers: OPERATOR, body: { amount_usd: usd, reason: 'test funds' } });
  expect(credit.status).toBe(201);
  return { token: signedIn.body.token, tenantId: signedIn.body.tenant_id, email };
}

const alertsTo = (email: string) => inbox.received.filter((m: ReceivedMail) => m.to.includes(email) && /Budget alert/.test(m.subject));

describe('a monthly budget', () => {
  it('is set, read and removed; bad input is 422 naming the field; the account carries it', async () => {
    const { token } = await world.fundedTenant(10);
    expect((await call('GET', '/v1/billing/budget', token)).status).toBe(404);
    expect((await call('GET', '/v1/billing/account', token)).body.budget).toBeNull();
    for (const [body, field] of [
      [{ monthly_usd: 0 }, 'monthly_usd'],
      [{ monthly_usd: '1.234' }, 'monthly_usd'],
      [{ monthly_usd: '2000000' }, 'monthly_usd'],
      [{ monthly_usd: 5, alert_percents: [0] }, 'alert_percents'],
      [{ monthly_usd: 5, alert_percents: [101] }, 'alert_percents'],
      [{ monthly_usd: 5, alert_percents: [50.5] }, 'alert_percents'],
      [{ monthly_usd: 5, alert_percents: [80, 50, 80] }, 'alert_percents'],
      [{ monthly_usd: 5, stop_at_limit: 'yes' }, 'stop_at_limit'],
    ] as const) {
      const refused = await call('PUT', '/v1/billing/budget', token, body);
      expect(refused.status, JSON.stringify(body)).toBe(422);
      expect(refused.body.detail).toContain(field);
    }
    const set = await call('PUT', '/v1/billing/budget', token, { monthly_usd: '12.50', alert_percents: [100, 25, 75], stop_at_limit: true });
    expect(set.status).toBe(200);
    const budget = { monthly_cents: 1250, spent_cents: 0, percent: 0, alert_percents: [25, 75, 100], next_alert_percent: 25, stop_at_limit: true };
    expect(set.body).toEqual(budget);
    expect((await call('GET', '/v1/billing/budget', token)).body).toEqual(budget);
    expect((await call('GET', '/v1/billing/account', token)).body.budget).toEqual(budget);
    // the defaults: 50, 80 and 100 %, no stop
    expect((await call('PUT', '/v1/billing/budget', token, { monthly_usd: 20 })).body).toMatchObject({ alert_percents: [50, 80, 100], stop_at_limit: false });
    expect((await call('DELETE', '/v1/billing/budget', token)).status).toBe(204);
    expect((await call('DELETE', '/v1/billing/budget', token)).status).toBe(204);
    expect((await call('GET', '/v1/billing/budget', token)).status).toBe(404);
  });

  it('tells each alert once, by mail and webhook, under parallel rentals and doubled sweeps; stops everything at 100 %', async () => {
    const start = world.clock.now().getTime();
    const { token, email } = await personsTenant(200);
    const endpoint = await call('POST', '/v1/webhook-endpoints', token, { url: hooksUrl, events: ['budget.threshold_reached'] });
    expect(endpoint.status).toBe(201);
    const nodes = (await world.offers((o) => o.rate >= 60 && o.rate <= 200)).slice(0, 3);
    const rates = nodes.reduce((sum, node) => sum + node.rate, 0);
    // the three first hours are 60 % of it: the 50 % line; an hour block of each passes 100 %
    const monthly = Math.ceil((rates * 100) / 60);
    expect((await call('PUT', '/v1/billing/budget', token, { monthly_usd: (monthly / 100).toFixed(2), stop_at_limit: true })).status).toBe(200);

    const rented = await Promise.all(nodes.map((node) => world.rent(token, { node_id: node.id })));
    expect(rented.map((r) => r.status)).toEqual([201, 201, 201]);
    await settled();
    // first hours charged side by side are judged once their machines are up: by the next charge or the sweep's evaluation
    await sweep();
    let budget = (await call('GET', '/v1/billing/budget', token)).body;
    expect(budget).toMatchObject({ monthly_cents: monthly, spent_cents: rates, percent: Math.floor((rates * 100) / monthly), next_alert_percent: 80 });
    world.clock.advance(30_000);
    await Promise.all([sweep(), sweep()]);

    // an hour on, the sweep pays the next block of each machine, twice at once: 80 % and 100 % are passed
    world.clock.advance(HOUR);
    await Promise.all([sweep(), sweep()]);
    await settled();
    await Promise.all([sweep(), sweep()]);
    await settled();
    await deliver();
    // the stop refunded the unused part of each machine's second block: the month counts what sticks
    const ledger: { kind: string; amount_cents: number }[] = (await call('GET', '/v1/billing/ledger', token)).body;
    const charged = -ledger.filter((e) => e.kind === 'rental_hour').reduce((sum, e) => sum + e.amount_cents, 0);
    const refunded = ledger.filter((e) => e.kind === 'refund').reduce((sum, e) => sum + e.amount_cents, 0);
    expect(charged).toBe(2 * rates);
    expect(refunded).toBeGreaterThan(0);
    budget = (await call('GET', '/v1/billing/budget', token)).body;
    expect(budget).toMatchObject({ spent_cents: charged - refunded, next_alert_percent: null });

    // told once each, to the person and the webhook
    expect(received.map((e) => e.data.percent).sort((a, b) => a - b)).toEqual([50, 80, 100]);
    expect(received.find((e) => e.data.percent === 50)).toEqual({ type: 'budget.threshold_reached', data: { percent: 50, monthly_cents: monthly, spent_cents: rates } });
    expect(received.find((e) => e.data.percent === 100)!.data).toEqual({ percent: 100, monthly_cents: monthly, spent_cents: 2 * rates });
    const mails = alertsTo(email);
    expect(mails.map((m) => /(\d+) %/.exec(m.subject)![1]).sort()).toEqual(['100', '50', '80']);
    expect(mails.find((m) => m.subject.includes('100 %'))!.text).toMatch(/renting is paused/);

    // nothing runs: every machine stopped here and at the cloud; renting paused for the budget, with the reason
    const instances: any[] = (await call('GET', '/v1/instances', token)).body;
    expect(instances.map((i) => i.status)).toEqual(['terminated', 'terminated', 'terminated']);
    const upstream = (await world.sandbox.cloud.listMachines()).filter((m) => instances.some((i) => i.id === m.label));
    expect(upstream.every((m) => m.status === 'terminated')).toBe(true);
    const account = (await call('GET', '/v1/billing/account', token)).body;
    expect(account).toMatchObject({ rentals: 'paused', running_machines: 0, pause: { kind: 'budget', tenant_can_resume: true } });
    expect(account.pause.reason).toMatch(/monthly budget .* is spent/);
    expect((await world.rent(token, { node_id: nodes[0]!.id })).status).toBe(409);

    // what sticks is under the budget again: resume is allowed (a budget still spent refuses it: the next test)
    expect((await call('POST', '/v1/billing/resume', token)).status).toBe(200);

    // more sweeps tell nothing more
    await sweep();
    await settled();
    await deliver();
    expect(received).toHaveLength(3);
    expect(alertsTo(email)).toHaveLength(3);
    world.clock.set(new Date(start));
  });

  it('set under what the month already spent acts at the PUT: the alerts due told and mailed, stop_at_limit stops at once', async () => {
    const { token, email } = await personsTenant(100);
    const nodes = (await world.offers((o) => o.rate >= 60 && o.rate <= 200)).slice(-3, -1);
    const rented = await Promise.all(nodes.map((node) => world.rent(token, { node_id: node.id })));
    expect(rented.map((r) => r.status)).toEqual([201, 201]);
    const spent = nodes[0]!.rate + nodes[1]!.rate;

    const lowered = await call('PUT', '/v1/billing/budget', token, { monthly_usd: (nodes[0]!.rate / 100).toFixed(2), alert_percents: [50, 80, 100], stop_at_limit: true });
    expect(lowered.status).toBe(200);
    expect(lowered.body).toMatchObject({ spent_cents: spent, next_alert_percent: null });
    // renting is paused by the PUT itself, with no charge or sweep since
    const account = (await call('GET', '/v1/billing/account', token)).body;
    expect(account).toMatchObject({ rentals: 'paused', pause: { kind: 'budget', tenant_can_resume: true } });
    expect((await world.rent(token, { node_id: nodes[0]!.id })).status).toBe(409);
    await settled();
    const instances: any[] = (await call('GET', '/v1/instances', token)).body;
    expect(instances.map((i) => i.status)).toEqual(['terminated', 'terminated']);
    expect(alertsTo(email).map((m) => /(\d+) %/.exec(m.subject)![1]).sort()).toEqual(['100', '50', '80']);
    // nothing is told twice: a sweep and the same PUT again add no mail
    await sweep();
    expect((await call('PUT', '/v1/billing/budget', token, { monthly_usd: (nodes[0]!.rate / 100).toFixed(2), alert_percents: [50, 80, 100], stop_at_limit: true })).status).toBe(200);
    await settled();
    expect(alertsTo(email)).toHaveLength(3);
  });

  it("mails its alerts within the address's mail allowance, as every other mail (5 asks an hour)", async () => {
    const start = world.clock.now().getTime();
    const { token, email } = await personsTenant(100);
    // the sign-up took one ask; four resends take the rest of the hour's five
    for (let ask = 0; ask < 4; ask++) expect((await world.api.call('POST', '/v1/auth/resend-code', { body: { email } })).status).toBe(200);
    const [node] = (await world.offers((o) => o.rate >= 60 && o.rate <= 200)).slice(-1);
    expect((await call('PUT', '/v1/billing/budget', token, { monthly_usd: ((2 * node!.rate) / 100).toFixed(2), alert_percents: [50, 100] })).status).toBe(200);
    const rented = await world.rent(token, { node_id: node!.id });
    expect(rented.status).toBe(201);
    await settled();
    await sweep();
    await settled();
    // told (the next alert is 100 %), not mailed: the address had had its five this hour
    expect((await call('GET', '/v1/billing/budget', token)).body).toMatchObject({ percent: 50, next_alert_percent: 100 });
    expect(alertsTo(email)).toEqual([]);

    // an hour on the allowance is back: the block that reaches 100 % is mailed
    world.clock.advance(HOUR + 60_000);
    await sweep();
    await settled();
    expect(alertsTo(email).map((m) => /(\d+) %/.exec(m.subject)![1])).toEqual(['100']);
    expect((await call('POST', `/v1/instances/${rented.body.id}/terminate`, token)).status).toBe(200);
    world.clock.set(new Date(start));
  });

  it('a budget stop ends with the month: resume is refused before it and allowed after', async () => {
    const start = world.clock.now().getTime();
    const { token } = await world.fundedTenant(50);
    const [node] = await world.offers((o) => o.rate >= 60 && o.rate <= 200);
    // the machine runs, so its first hour sticks; then a budget below it stops everything at the sweep's evaluation
    const rented = await world.rent(token, { node_id: node!.id });
    expect(rented.status).toBe(201);
    await settled();
    world.clock.advance(10 * 60_000);
    expect((await call('PUT', '/v1/billing/budget', token, { monthly_usd: ((node!.rate - 1) / 100).toFixed(2), alert_percents: [], stop_at_limit: true })).status).toBe(200);
    await sweep();
    await settled();
    await sweep();
    expect((await call('GET', `/v1/instances/${rented.body.id}`, token)).body.status).toMatch(/terminat/);
    expect((await call('POST', '/v1/billing/resume', token)).status).toBe(409);
    const now = world.clock.now();
    world.clock.set(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1, 0, 0, 1)));
    expect((await call('GET', '/v1/billing/budget', token)).body).toMatchObject({ spent_cents: 0, percent: 0 });
    expect((await call('POST', '/v1/billing/resume', token)).status).toBe(200);
    world.clock.set(new Date(start));
  });
});
