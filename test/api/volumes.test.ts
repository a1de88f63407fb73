import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR, rentalWorld, type RentalWorld } from '../support/rentals.ts';

/** Volumes over HTTP on the sandbox: made, attached at rental, kept, deleted. */
let world: RentalWorld;
beforeAll(async () => {
  world = await rentalWorld({}, { sandbox: { offers: 600 } });
});
afterAll(() => world.close());

const volumesOf = async (token: string) => (await world.api.call('GET', '/v1/volumes', { token })).body as any[];
const make = (token: string, body: Record<string, unknown>) => world.api.call('POST', '/v1/volumes', { token, body });
let pick = 0;
/** A cheap node with a known region, a different one each time. */
const nodeIn = async () => (await world.offers((o) => o.rate >= 20 && o.rate <= 500 && o.region !== null))[pick++]!;

describe('volumes', () => {
  it('are made at a provider that has them, in one of its regions, with their storage price', async () => {
    const { token } = await world.fundedTenant(50);
    const node = await nodeIn();
    const made = await make(token, { name: 'datasets', size_gb: 100, provider: 'sandbox', region: node.region });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body).toEqual({
      id: expect.stringMatching(/^vol_/),
      name: 'datasets',
      size_gb: 100,
      provider: 'sandbox',
      region: node.region,
      status: 'available',
      attached_instance_id: null,
      price_per_gb_month_cents: 7,
      price_per_gb_hour_usd: '0.000096',
      created_at: world.clock.now().toISOString(),
      ends_at: null,
    });
    expect((await volumesOf(token)).map((v) => v.id)).toEqual([made.body.id]);
    // the provider keeps it under its own id, in the region asked for
    const [row] = await world.api.plane.storage.execute<{ upstream_id: string }[]>('select upstream_id from volumes where id = ?', [made.body.id]);
    const upstream_id = row!.upstream_id;
    expect(await world.sandbox.getVolume(upstream_id)).toMatchObject({ volumeId: upstream_id, region: node.region, sizeGb: 100 });
  });

  it('refuse what cannot be made: another provider, a region without volumes, sizes out of bounds', async () => {
    const { token } = await world.fundedTenant(5);
    const vast = await make(token, { name: 'x', size_gb: 10, provider: 'vast', region: 'US' });
    expect(vast.status).toBe(422);
    expect(vast.body.detail).toContain('sandbox');
    const nowhere = await make(token, { name: 'x', size_gb: 10, provider: 'sandbox', region: 'Atlantis' });
    expect(nowhere.status).toBe(422);
    expect(nowhere.body.errors[0].loc).toEqual(['body', 'region']);
    for (const size_gb of [0, 10_001, 1.5, '10']) expect((await make(token, { name: 'x', size_gb, provider: 'sandbox', region: 'x' })).status).toBe(422);
    expect(await volumesOf(token)).toEqual([]);
  });

  it('attach at rental in the same provider and region, serve one machine at a time, and outlive it', async () => {
    const { token, tenantId } = await world.fundedTenant(100);
    // a region with two cheap nodes: one for the rental, one that must not get the volume as well
    const offers = await world.offers((o) => o.rate >= 20 && o.rate <= 500 && o.region !== null);
    const region = offers.map((o) => o.region).find((r, i, all) => all.indexOf(r) !== i)!;
    const [node, second] = offers.filter((o) => o.region === region);
    const volume = (await make(token, { name: 'ckpt', size_gb: 20, provider: 'sandbox', region })).body;

    const far = offers.find((o) => o.region !== region)!;
    const wrongRegion = await world.rent(token, { node_id: far.id, volume_ids: [volume.id] });
    expect(wrongRegion.status).toBe(409);
    expect(wrongRegion.body.detail).toContain(region!);

    const rented = await world.rent(token, { node_id: node!.id, volume_ids: [volume.id] });
    expect(rented.status, JSON.stringify(rented.body)).toBe(201);
    expect(rented.body.volume_ids).toEqual([volume.id]);
    const machine = (await world.sandbox.cloud.listMachines()).find((m) => m.label === rented.body.id)!;
    expect(machine.options.volumeIds).toHaveLength(1);
    expect((await volumesOf(token))[0]).toMatchObject({ status: 'attached', attached_instance_id: rented.body.id });

    expect((await world.rent(token, { node_id: second!.id, volume_ids: [volume.id] })).status).toBe(409);
    expect((await world.api.call('DELETE', `/v1/volumes/${volume.id}`, { token })).status).toBe(409);

    // an emergency stop ends the machine and keeps the volume
    expect((await world.api.call('POST', '/v1/billing/stop', { token })).status).toBe(200);
    expect((await volumesOf(token))[0]).toMatchObject({ id: volume.id, status: 'available', attached_instance_id: null });
    await world.api.call('POST', '/v1/billing/resume', { token });
    await world.api.call('POST', `/v1/operator/tenants/${tenantId}/resume`, { headers: OPERATOR });

    expect((await world.api.call('DELETE', `/v1/volumes/${volume.id}`, { token })).status).toBe(204);
    expect(await volumesOf(token)).toEqual([]);
    expect(await world.sandbox.getVolume(machine.options.volumeIds[0]!)).toBeNull();
    expect((await world.api.call('DELETE', `/v1/volumes/${volume.id}`, { token })).status).toBe(404);
  });

  it('need rent to make and delete, read to list; another tenant\'s volume is 404 and cannot be attached', async () => {
    const owner = await world.fundedTenant(20);
    const node = await nodeIn();
    const volume = (await make(owner.token, { name: 'mine', size_gb: 5, provider: 'sandbox', region: node.region })).body;
    const reader = (await world.api.call('POST', '/v1/tokens', { token: owner.token, body: { scopes: ['read'] } })).body.token;
    expect((await world.api.call('GET', '/v1/volumes', { token: reader })).status).toBe(200);
    expect((await make(reader, { name: 'x', size_gb: 5, provider: 'sandbox', region: node.region })).status).toBe(403);
    expect((await world.api.call('DELETE', `/v1/volumes/${volume.id}`, { token: reader })).status).toBe(403);

    const other = await world.fundedTenant(20);
    expect((await world.api.call('DELETE', `/v1/volumes/${volume.id}`, { token: other.token })).status).toBe(404);
    const attach = await world.rent(other.token, { node_id: node.id, volume_ids: [volume.id] });
    expect(attach.status).toBe(422);
    expect(attach.body.errors[0].loc).toEqual(['body', 'volume_ids', 0]);
    expect((await volumesOf(owner.token))[0].status).toBe('available');
  });
});
