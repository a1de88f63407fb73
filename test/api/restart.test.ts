import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../adapters/clock/manual-clock.ts';
import type { StorageTarget } from '../../adapters/storage/mikro-storage.ts';
import { rateCentsPerHour } from '../../core/market/pricing.ts';
import { startApi, type TestApi } from '../support/api.ts';
import { freshPostgres, postgresReachable, type TestDatabase } from '../support/database.ts';
import { OPERATOR, sandboxOf } from '../support/rentals.ts';

/**
 * The embedded sandbox and manual processor keep their state in the control plane's database: a restart
 * continues every rental and every unpaid checkout, and every process on one database sees one cloud.
 */

const HOUR = 3_600_000;
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** A control plane as a server starts it (sandbox and manual processor from configuration) on `target`. */
const openPlane = (target: StorageTarget, clock: ManualClock): Promise<TestApi> =>
  startApi({}, { database: { target, drop: async () => undefined }, clock });

const sweep = async (api: TestApi) => (await api.call('POST', '/v1/operator/sweep', { headers: OPERATOR })).body;
const instance = async (api: TestApi, token: string, id: string) => (await api.call('GET', `/v1/instances/${id}`, { token })).body;
const balance = async (api: TestApi, token: string) => (await api.call('GET', '/v1/billing/balance', { token })).body.balance_cents as number;

async function fundedTenant(api: TestApi, usd: number) {
  const tenant = await api.newTenant();
  const credit = await api.call('POST', `/v1/operator/tenants/${tenant.tenantId}/credit`, { headers: OPERATOR, body: { amount_usd: usd, reason: 'test funds' } });
  expect(credit.status).toBe(201);
  return tenant;
}

/** Rents the cheapest sandbox offer of one machine costing 60 to 400 cents an hour. */
async function rentOne(api: TestApi, token: string) {
  const offers = (await sandboxOf(api).listOffers())
    .map((offer) => ({ ...offer, rate: rateCentsPerHour(offer.priceUsdPerHour, 0) }))
    .filter((offer) => offer.available === 1 && offer.rate >= 60 && offer.rate <= 400)
    .sort((a, b) => a.rate - b.rate || a.id.localeCompare(b.id));
  const node = offers[0]!;
  const res = await api.call('POST', '/v1/instances', { token, body: { node_id: node.id } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { node, rented: res.body };
}

/** The payer presses the embedded checkout page's button; 303 back to the return address. */
const pay = (api: TestApi, url: string) => fetch(`${api.baseUrl}${new URL(url).pathname}/pay`, { method: 'POST', redirect: 'manual' });

async function restartScenario(target: StorageTarget) {
  const clock = new ManualClock(new Date('2026-11-21T12:00:00.000Z'));
  const before = await openPlane(target, clock);
  const { token } = await fundedTenant(before, 100);
  const start = clock.now().getTime();
  const { node, rented } = await rentOne(before, token);
  clock.advance(30_000);
  expect(await instance(before, token, rented.id)).toMatchObject({ status: 'running' });
  const checkout = (await before.call('POST', '/v1/billing/checkout', { token, body: { amount_usd: 25 } })).body;
  expect(checkout).toMatchObject({ status: 'pending', amount_cents: 2_500 });
  await before.close();

  clock.set(new Date(start + HOUR));
  const after = await openPlane(target, clock);
  try {
    const report = await sweep(after);
    expect(report).toMatchObject({ ran: true, gone_upstream: 0, orphans_terminated: 0 });
    expect(report.blocks_paid).toBeGreaterThanOrEqual(1);
    const billed = await instance(after, token, rented.id);
    expect(billed).toMatchObject({ status: 'running', charged_cents: 2 * node.rate, paid_until: new Date(start + 2 * HOUR).toISOString() });
    expect((await sandboxOf(after).listMachines()).map((m) => [m.label, m.status])).toEqual([[rented.id, 'running']]);
    // the machine still holds its offer: nobody else can rent it
    expect((await sandboxOf(after).getOffer(node.id.slice('sandbox:'.length)))?.available).toBe(0);

    // the checkout opened before the restart is paid after it, and credits once
    expect((await pay(after, checkout.url)).status).toBe(303);
    expect(await balance(after, token)).toBe(10_000 - 2 * node.rate + 2_500);
    const synced = await after.call('POST', `/v1/billing/checkout/${checkout.session_id}/sync`, { token });
    expect(synced.body).toMatchObject({ status: 'confirmed', amount_cents: 2_500 });
    await sweep(after);
    expect((await pay(after, checkout.url)).status).toBe(303); // pressed again: already paid, nothing more
    const ledger = (await after.call('GET', '/v1/billing/ledger', { token })).body as { kind: string }[];
    expect(ledger.filter((entry) => entry.kind === 'deposit')).toHaveLength(1);
    expect(await balance(after, token)).toBe(10_000 - 2 * node.rate + 2_500);
  } finally {
    await after.close();
  }
}

describe.runIf(await postgresReachable())('a restart on PostgreSQL', () => {
  it('continues the rental (billed, not gone upstream) and the unpaid manual checkout', async () => {
    const database: TestDatabase = await freshPostgres();
    cleanups.push(() => database.drop());
    await restartScenario(database.target);
  });
});

describe('a restart on an embedded PGlite directory', () => {
  it('continues the rental (billed, not gone upstream) and the unpaid manual checkout', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gcp-restart-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    await restartScenario({ kind: 'pglite', dataDir });
  }, 30_000);
});

describe.runIf(await postgresReachable())('two control planes on one PostgreSQL database', () => {
  it('see one simulated cloud: a machine rented through one is neither an orphan nor gone for the other\'s sweep', async () => {
    const database = await freshPostgres();
    cleanups.push(() => database.drop());
    const clock = new ManualClock(new Date('2026-11-21T12:00:00.000Z'));
    const replica = await openPlane(database.target, clock);
    const daemon = await openPlane(database.target, clock);
    cleanups.push(() => replica.close(), () => daemon.close());

    const { token } = await fundedTenant(replica, 100);
    const start = clock.now().getTime();
    const { node, rented } = await rentOne(replica, token);
    const offerId = node.id.slice('sandbox:'.length);
    // the other process sees the machine and the unit of capacity it took
    expect((await sandboxOf(daemon).getOffer(offerId))?.available).toBe(0);
    expect((await sandboxOf(daemon).listMachines()).map((m) => m.label)).toEqual([rented.id]);

    clock.advance(30_000);
    let report = await sweep(daemon);
    expect(report).toMatchObject({ ran: true, gone_upstream: 0, orphans_terminated: 0 });
    expect(await instance(replica, token, rented.id)).toMatchObject({ status: 'running' });
    const [machine] = await sandboxOf(replica).listMachines();
    expect(machine).toMatchObject({ label: rented.id, status: 'running' });

    clock.set(new Date(start + HOUR));
    report = await sweep(daemon);
    expect(report).toMatchObject({ gone_upstream: 0, orphans_terminated: 0 });
    expect(await instance(replica, token, rented.id)).toMatchObject({ status: 'running', charged_cents: 2 * node.rate });

    // a termination through the daemon's API reaches the machine the replica made
    expect((await daemon.call('POST', `/v1/instances/${rented.id}/terminate`, { token })).status).toBe(200);
    expect((await sandboxOf(replica).getMachine(machine!.machineId))?.status).toBe('terminated');
    expect((await sandboxOf(replica).getOffer(offerId))?.available).toBe(1);
  });
});
