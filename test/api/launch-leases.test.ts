import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Reconciler, type ReconcileCounts } from '../../core/billing/reconciler.ts';
import type { Machine } from '../../core/ports/providers.ts';
import { rentalWorld, type RentalWorld } from '../support/rentals.ts';

const MINUTE = 60_000;
// renewed every 200 s of real time: never during this test, as if its process had died
const LEASE_MS = 10 * MINUTE;

let world: RentalWorld;
beforeAll(async () => {
  world = await rentalWorld({ upstream: { rentTimeoutMs: 1_000, launchLeaseMs: LEASE_MS } });
});
afterAll(() => world.close());

const counts = (): ReconcileCounts => ({ adopted: 0, failedProvisioning: 0, goneUpstream: 0, orphansTerminated: 0, terminationsRetried: 0, preempted: 0, errors: [] });

describe('a create that died with its process (docs/decisions.md, "Crash anywhere, lose nothing")', () => {
  it('is failed and refunded by the first pass past its lease, not at the provisioning deadline; its key answers at once', async () => {
    const tenant = await world.fundedTenant(100);
    const [node] = await world.offers((o) => o.rate >= 60 && o.rate <= 400);
    const original = world.sandbox.createMachine.bind(world.sandbox);
    let answer!: (machine: Promise<Machine>) => void;
    const request: { label?: string } = {};
    world.sandbox.createMachine = (req) => {
      request.label = req.label;
      // the create never answers while the test runs: the process that made it is, for the pass, dead
      return new Promise<Machine>((resolve) => (answer = (machine) => resolve(machine)));
    };
    const rented = await world.rent(tenant.token, { node_id: node!.id, idempotency_key: 'died-with-its-process' });
    world.sandbox.createMachine = original;
    expect(rented.status).toBe(201);
    expect(rented.body).toMatchObject({ status: 'provisioning', charged_cents: node!.rate });

    // another process's pass: it does not renew this process's lease
    const rentals = world.api.plane.services.rentals;
    const elsewhere = { endBilling: rentals.endBilling.bind(rentals), removeUpstream: rentals.removeUpstream.bind(rentals), launchingHere: () => false };
    const reconciler = new Reconciler({ storage: world.api.plane.storage, clock: world.clock, rentals: elsewhere, provisioningDeadlineMs: 15 * MINUTE });
    const first = counts();
    await reconciler.reconcile(world.sandbox, first);
    expect(first.failedProvisioning).toBe(0); // the lease still runs: the create is its process's
    const get = () => world.api.call('GET', `/v1/instances/${rented.body.id}`, { token: tenant.token }).then((r) => r.body);
    expect((await get()).status).toBe('provisioning');

    world.clock.advance(LEASE_MS + 1_000); // past the lease, well within the 15-minute deadline
    const second = counts();
    await reconciler.reconcile(world.sandbox, second);
    expect(second.failedProvisioning).toBe(1);
    expect(await get()).toMatchObject({ status: 'failed', charged_cents: 0 });
    expect((await world.balance(tenant.token)).balance_cents).toBe(10_000);

    // the key answers at once with the rental as it stands: without the lease it waited on the dead create for
    // over a minute, so a bound far above a loaded machine's request time still tells the two apart
    const started = performance.now();
    const again = await world.rent(tenant.token, { node_id: node!.id, idempotency_key: 'died-with-its-process' });
    expect(performance.now() - started).toBeLessThan(15_000);
    expect(again.body).toMatchObject({ id: rented.body.id, status: 'failed' });

    // a machine the create made after all is removed: nobody pays for it
    answer(original({ offerId: node!.id.split(':')[1]!, label: request.label!, name: 'late', image: 'x' } as never));
    await expect.poll(async () => (await world.sandbox.cloud.listMachines()).filter((m) => m.label === rented.body.id && m.status !== 'terminated').length).toBe(0);
    expect((await world.balance(tenant.token)).balance_cents).toBe(10_000);
  });

  it('whose process is known dead is failed by the next pass at once, its lease notwithstanding', async () => {
    const tenant = await world.fundedTenant(100);
    const [, node] = await world.offers((o) => o.rate >= 60 && o.rate <= 400);
    const original = world.sandbox.createMachine.bind(world.sandbox);
    let fail!: (error: Error) => void;
    world.sandbox.createMachine = () => new Promise<Machine>((_, reject) => (fail = reject));
    const rented = await world.rent(tenant.token, { node_id: node!.id, idempotency_key: 'holder-died' });
    world.sandbox.createMachine = original;
    expect(rented.body.status).toBe('provisioning');
    // the lease's holder is a process that is gone (on PGlite any other than this one; on PostgreSQL nobody holds its lock)
    await world.api.plane.storage.execute(`update launch_leases set holder = 'proc_gone00000000000000000' where instance_id = ?`, [rented.body.id]);
    const rentals = world.api.plane.services.rentals;
    const elsewhere = { endBilling: rentals.endBilling.bind(rentals), removeUpstream: rentals.removeUpstream.bind(rentals), launchingHere: () => false };
    const found = counts();
    await new Reconciler({ storage: world.api.plane.storage, clock: world.clock, rentals: elsewhere, provisioningDeadlineMs: 15 * MINUTE }).reconcile(world.sandbox, found);
    expect(found.failedProvisioning).toBe(1);
    expect((await world.api.call('GET', `/v1/instances/${rented.body.id}`, { token: tenant.token })).body).toMatchObject({ status: 'failed', charged_cents: 0 });
    expect((await world.balance(tenant.token)).balance_cents).toBe(10_000);
    fail(new Error('the process is gone'));
  });
});
