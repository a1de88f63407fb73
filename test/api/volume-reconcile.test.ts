import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLambdaProvider } from '../../adapters/providers/lambda/index.ts';
import { createRunpodProvider } from '../../adapters/providers/runpod/index.ts';
import { ManualClock } from '../../adapters/clock/manual-clock.ts';
import type { Provider } from '../../core/ports/providers.ts';
import { startFakeLambda, type FakeLambda } from '../fakes/lambda/server.ts';
import { startFakeRunpod, type FakeRunpod } from '../fakes/runpod/server.ts';
import { startApi, type TestApi } from '../support/api.ts';
import { OPERATOR, rentalWorld, type RentalWorld } from '../support/rentals.ts';

/**
 * A volume create the provider gives no answer to: the volume stays `creating`, and the sweep's
 * volume reconciler adopts it by its label (billed from its creation), fails it at no cost when the provider never
 * made it by the deadline, and deletes upstream volumes of ours nobody pays for. A clear refusal fails at once.
 */
const MINUTE = 60_000;
const DEADLINE = 15 * MINUTE;

let world: RentalWorld;
beforeAll(async () => {
  world = await rentalWorld({}, { faulty: true });
});
afterAll(() => world.close());

const sweep = async (api: TestApi = world.api) => {
  const report = (await api.call('POST', '/v1/operator/sweep', { headers: OPERATOR })).body;
  expect(report.errors).toEqual([]);
  return report;
};
const volumeOf = async (token: string, id: string, api: TestApi = world.api) => ((await api.call('GET', '/v1/volumes', { token })).body as any[]).find((v) => v.id === id);
const storageRecords = async (token: string, volumeId: string, api: TestApi = world.api) =>
  ((await api.call('GET', '/v1/metering/usage?resource_kind=volume_storage&limit=1000', { token })).body as any[]).filter((r) => r.reference === volumeId);
const upstreamIdOf = async (volumeId: string, api: TestApi = world.api) =>
  (await api.plane.storage.execute<{ upstream_id: string | null }[]>('select upstream_id from volumes where id = ?', [volumeId]))[0]!.upstream_id;
const region = async () => (await world.sandbox.volumeOffers())[0]!.region;

describe('volumes whose create had no answer (sandbox)', () => {
  it('made but unanswered: 202 creating, unbilled and unattachable until the sweep finds it by its label; then adopted and billed from its creation', async () => {
    const { token } = await world.fundedTenant(20);
    world.faults!.failNextVolumeCreates(1, 'ambiguous');
    const made = await world.api.call('POST', '/v1/volumes', { token, body: { name: 'lost answer', size_gb: 50, provider: 'sandbox', region: await region() } });
    expect(made.status, JSON.stringify(made.body)).toBe(202);
    expect(made.body).toMatchObject({ status: 'creating', size_gb: 50 });
    const createdAt = made.body.created_at;
    // it exists upstream under our label, unknown to us
    const upstream = (await world.sandbox.listVolumes()).filter((v) => v.label === made.body.id);
    expect(upstream).toHaveLength(1);
    expect(await upstreamIdOf(made.body.id)).toBeNull();
    expect((await world.api.call('DELETE', `/v1/volumes/${made.body.id}`, { token })).status).toBe(409);

    world.clock.advance(90 * MINUTE);
    const report = await sweep();
    expect(report).toMatchObject({ volumes_adopted: 1, volumes_failed: 0, volume_orphans_deleted: 0 });
    expect(await volumeOf(token, made.body.id)).toMatchObject({ status: 'available', created_at: createdAt });
    expect(await upstreamIdOf(made.body.id)).toBe(upstream[0]!.volumeId);
    // two started hours since its creation, recorded in the same pass
    const records = await storageRecords(token, made.body.id);
    expect(records.map((r) => [r.quantity, r.started_at]).sort()).toEqual([
      ['50', createdAt],
      ['50', new Date(Date.parse(createdAt) + 60 * MINUTE).toISOString()],
    ]);
    expect((await sweep()).volumes_adopted).toBe(0);

    // it is a volume like any other now: deleted upstream on DELETE
    expect((await world.api.call('DELETE', `/v1/volumes/${made.body.id}`, { token })).status).toBe(204);
    expect(await world.sandbox.getVolume(upstream[0]!.volumeId)).toBeNull();
  });

  it('never made: waits out the deadline (an outage changes nothing), then failed, nothing billed', async () => {
    const { token } = await world.fundedTenant(20);
    world.faults!.failNextVolumeCreates(1, 'lost');
    const made = await world.api.call('POST', '/v1/volumes', { token, body: { name: 'never', size_gb: 30, provider: 'sandbox', region: await region() } });
    expect(made.status).toBe(202);
    expect((await world.sandbox.listVolumes()).some((v) => v.label === made.body.id)).toBe(false);

    world.clock.advance(DEADLINE - MINUTE);
    expect(await sweep()).toMatchObject({ volumes_adopted: 0, volumes_failed: 0 });
    expect((await volumeOf(token, made.body.id)).status).toBe('creating');

    // past the deadline, but the provider cannot be listed: nothing is decided
    world.clock.advance(2 * MINUTE);
    world.faults!.setOutage(true);
    try {
      const blind = (await world.api.call('POST', '/v1/operator/sweep', { headers: OPERATOR })).body;
      expect(blind.errors.join(' ')).toMatch(/reconcile volumes sandbox: .*list volumes/);
      expect(blind.volumes_failed).toBe(0);
      expect((await volumeOf(token, made.body.id)).status).toBe('creating');
    } finally {
      world.faults!.setOutage(false);
    }

    expect(await sweep()).toMatchObject({ volumes_adopted: 0, volumes_failed: 1 });
    expect((await volumeOf(token, made.body.id)).status).toBe('failed');
    world.clock.advance(5 * 60 * MINUTE);
    await sweep();
    expect(await storageRecords(token, made.body.id)).toEqual([]);
    expect((await world.api.call('GET', '/v1/billing/ledger', { token })).body.filter((e: any) => e.kind === 'usage')).toEqual([]);
  });

  it('deletes upstream volumes of ours nobody pays for (failed, deleted or unknown ids) and leaves the rest alone', async () => {
    const { token } = await world.fundedTenant(20);
    const where = await region();
    world.faults!.failNextVolumeCreates(1, 'lost');
    const failed = (await world.api.call('POST', '/v1/volumes', { token, body: { name: 'late', size_gb: 10, provider: 'sandbox', region: where } })).body;
    world.clock.advance(DEADLINE);
    expect((await sweep()).volumes_failed).toBe(1);
    const live = (await world.api.call('POST', '/v1/volumes', { token, body: { name: 'live', size_gb: 10, provider: 'sandbox', region: where } })).body;
    expect(live.status).toBe('available');

    // the lost create landed after all, too late; a volume whose row never was; another user's volume on the account
    const late = await world.sandbox.createVolume({ label: failed.id, name: 'late', sizeGb: 10, region: where });
    const unknown = await world.sandbox.createVolume({ label: 'vol_neverours0', name: 'x', sizeGb: 10, region: where });
    const foreign = await world.sandbox.createVolume({ label: 'someone-elses', name: 'theirs', sizeGb: 10, region: where });
    // a second volume under the live one's label (a retried create): the row holds the other one
    const duplicate = await world.sandbox.createVolume({ label: live.id, name: 'live', sizeGb: 10, region: where });

    const report = await sweep();
    expect(report).toMatchObject({ volume_orphans_deleted: 3, volumes_adopted: 0, volumes_failed: 0 });
    for (const gone of [late, unknown, duplicate]) expect(await world.sandbox.getVolume(gone.volumeId)).toBeNull();
    expect(await world.sandbox.getVolume(foreign.volumeId)).not.toBeNull();
    expect(await world.sandbox.getVolume((await upstreamIdOf(live.id))!)).not.toBeNull();
    expect((await volumeOf(token, failed.id)).status).toBe('failed');
    expect((await volumeOf(token, live.id)).status).toBe('available');
    expect((await sweep()).volume_orphans_deleted).toBe(0);
    await world.sandbox.deleteVolume(foreign.volumeId);
  });

  it('an answer that comes after the deadline changes nothing: the volume stays failed (409) and the one made is deleted as an orphan', async () => {
    const { token } = await world.fundedTenant(20);
    const held = world.faults!.holdNextVolumeCreate();
    const pending = world.api.call('POST', '/v1/volumes', { token, body: { name: 'slow', size_gb: 10, provider: 'sandbox', region: await region() } });
    await held.reached;
    const [row] = (await world.api.call('GET', '/v1/volumes', { token })).body as any[];
    expect(row).toMatchObject({ name: 'slow', status: 'creating' });
    world.clock.advance(DEADLINE);
    expect((await sweep()).volumes_failed).toBe(1);
    held.open();
    const answer = await pending;
    expect(answer.status).toBe(409);
    expect(answer.body.detail).toContain('given up');
    expect((await volumeOf(token, row.id)).status).toBe('failed');
    expect(await upstreamIdOf(row.id)).toBeNull();
    const made = (await world.sandbox.listVolumes()).filter((v) => v.label === row.id);
    expect(made).toHaveLength(1);
    expect((await sweep()).volume_orphans_deleted).toBe(1);
    expect(await world.sandbox.getVolume(made[0]!.volumeId)).toBeNull();
    world.clock.advance(3 * 60 * MINUTE);
    await sweep();
    expect(await storageRecords(token, row.id)).toEqual([]);
  });

  it('a clear refusal fails the volume at once (409), nothing upstream, nothing billed', async () => {
    const { token } = await world.fundedTenant(20);
    world.faults!.failNextVolumeCreates(1, 'rejected');
    const refused = await world.api.call('POST', '/v1/volumes', { token, body: { name: 'no', size_gb: 10, provider: 'sandbox', region: await region() } });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain('refused');
    const [row] = (await world.api.call('GET', '/v1/volumes', { token })).body as any[];
    expect(row).toMatchObject({ name: 'no', status: 'failed' });
    world.clock.advance(2 * 60 * MINUTE);
    expect(await sweep()).toMatchObject({ volumes_adopted: 0, volumes_failed: 0, volume_orphans_deleted: 0 });
    expect((await world.sandbox.listVolumes()).some((v) => v.label === row.id)).toBe(false);
    expect(await storageRecords(token, row.id)).toEqual([]);
  });
});

/** The same over the real adapters and their fakes: the lost answer is the fake's (RunPod: 504 after making it; Lambda: no answer at all). */
describe('volumes whose create had no answer (RunPod and Lambda fakes)', () => {
  let runpod: FakeRunpod;
  let lambda: FakeLambda;
  let api: TestApi;
  const clock = new ManualClock(new Date('2026-11-21T12:00:00.000Z'));

  beforeAll(async () => {
    runpod = await startFakeRunpod();
    lambda = await startFakeLambda();
    const providers: Provider[] = [
      createRunpodProvider({ apiKey: runpod.apiKey, baseUrl: runpod.url, timeoutMs: 2_000, retries: 0 }),
      createLambdaProvider({ apiKey: lambda.state.apiKey, baseUrl: lambda.url, timeoutMs: 500, retries: 0, retryBaseMs: 1, retryMaxMs: 5, minIntervalMs: 0, launchIntervalMs: 0 }),
    ];
    api = await startApi({ payments: { kind: 'manual' } }, { providers, clock });
  });
  afterAll(async () => {
    await api?.close();
    await runpod?.close();
    await lambda?.close();
  });

  const fundedTenant = async () => {
    const tenant = await api.newTenant();
    expect((await api.call('POST', `/v1/operator/tenants/${tenant.tenantId}/credit`, { headers: OPERATOR, body: { amount_usd: 20, reason: 'test funds' } })).status).toBe(201);
    return tenant;
  };

  it('RunPod: a network volume made before a 504 is adopted by its name and billed; one never made is failed', async () => {
    const { token } = await fundedTenant();
    runpod.knobs.failNext(1, 504, { afterCommit: true, method: 'POST', path: '/v2/network-volumes' });
    const made = await api.call('POST', '/v1/volumes', { token, body: { name: 'rp', size_gb: 20, provider: 'runpod', region: 'US-KS-2' } });
    expect(made.status, JSON.stringify(made.body)).toBe(202);
    const [upstream] = [...runpod.state.networkVolumes.values()].filter((v) => v.name === made.body.id);
    expect(upstream).toBeDefined();

    runpod.knobs.failNext(1, 400, { method: 'POST', path: '/v2/network-volumes' });
    expect((await api.call('POST', '/v1/volumes', { token, body: { name: 'refused', size_gb: 20, provider: 'runpod', region: 'US-KS-2' } })).status).toBe(409);
    runpod.knobs.failNext(1, 504, { method: 'POST', path: '/v2/network-volumes' });
    const never = await api.call('POST', '/v1/volumes', { token, body: { name: 'never', size_gb: 20, provider: 'runpod', region: 'US-KS-2' } });
    expect(never.status).toBe(202);

    clock.advance(30 * MINUTE);
    expect(await sweep(api)).toMatchObject({ volumes_adopted: 1, volumes_failed: 1 });
    expect(await volumeOf(token, made.body.id, api)).toMatchObject({ status: 'available' });
    expect(await upstreamIdOf(made.body.id, api)).toBe(upstream!.id);
    expect(await volumeOf(token, never.body.id, api)).toMatchObject({ status: 'failed' });
    expect((await storageRecords(token, made.body.id, api)).map((r) => r.quantity)).toEqual(['20']);
    expect(await storageRecords(token, never.body.id, api)).toEqual([]);

    // an upstream volume named after the failed one (the create landed late) is deleted
    runpod.state.networkVolumes.set('late0001', { id: 'late0001', name: never.body.id, size: 20, dataCenter: 'US-KS-2', type: 'STANDARD' });
    expect((await sweep(api)).volume_orphans_deleted).toBe(1);
    expect(runpod.state.networkVolumes.has('late0001')).toBe(false);
    expect(runpod.state.networkVolumes.has(upstream!.id)).toBe(true);
  });

  it('Lambda: a filesystem whose answer never came is adopted by its name and billed; an orphan is deleted', async () => {
    const { token } = await fundedTenant();
    lambda.state.hangNext(1, '/filesystems');
    const made = await api.call('POST', '/v1/volumes', { token, body: { name: 'lm', size_gb: 40, provider: 'lambda', region: 'us-east-1' } });
    expect(made.status, JSON.stringify(made.body)).toBe(202);
    const upstream = [...lambda.state.fileSystems.values()].find((fs) => fs.name === `${made.body.id.replace('_', '-')}-40gb`);
    expect(upstream).toBeDefined();

    clock.advance(10 * MINUTE);
    const report = await sweep(api);
    expect(report.volumes_adopted).toBe(1);
    expect(await volumeOf(token, made.body.id, api)).toMatchObject({ status: 'available', size_gb: 40 });
    expect(await upstreamIdOf(made.body.id, api)).toBe(upstream!.id);
    expect((await storageRecords(token, made.body.id, api)).map((r) => r.quantity)).toEqual(['40']);

    expect((await api.call('DELETE', `/v1/volumes/${made.body.id}`, { token })).status).toBe(204);
    // a filesystem under its name turns up again (a second create that landed late): nobody pays for it, so it goes
    lambda.state.fileSystems.set('late0001', { id: 'late0001', name: upstream!.name, region: 'us-east-1', created: new Date().toISOString(), bytesUsed: 0 });
    expect((await sweep(api)).volume_orphans_deleted).toBe(1);
    expect(lambda.state.fileSystems.has('late0001')).toBe(false);
  });
});
