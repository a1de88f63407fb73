import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Reconciler } from '../../core/billing/reconciler.ts';
import { perGpuCents } from '../../core/market/pricing.ts';
import type { Offer } from '../../core/market/offer.ts';
import { RecoveryStarter } from '../../core/recovery/recovery-starter.ts';
import { OPERATOR, rentalWorld, type RentalWorld } from '../support/rentals.ts';
import { sshKeygen } from '../support/ssh-keys.ts';

/**
 * Managed recovery over HTTP (docs/decisions.md, "Managed recovery"): a machine lost or preempted at the sandbox is
 * settled by the next sweep and replaced in the same pass, by the cheapest node like it within the first machine's
 * per-GPU rate and the token's cap, with the same options; charged exactly, rented once whoever runs the pass, and
 * not again past max_attempts, the rate or the cap.
 */
const MINUTE = 60_000;
type Node = Offer & { rate: number };
let world: RentalWorld;
beforeAll(async () => {
  world = await rentalWorld({ secretsKey: new Uint8Array(32).fill(5) }, { sandbox: { offers: 600, spotPreemptionsPerHour: 0 }, webhookResolver: async () => [{ address: '93.184.216.34', family: 4 }] });
});
afterAll(() => world.close());

const call = (...args: Parameters<RentalWorld['api']['call']>) => world.api.call(...args);
const sweep = async () => {
  const res = await call('POST', '/v1/operator/sweep', { headers: OPERATOR });
  expect(res.status).toBe(200);
  return res.body;
};
const instance = async (token: string, id: string) => (await call('GET', `/v1/instances/${id}`, { token })).body;
const machineOf = async (instanceId: string) => (await world.sandbox.cloud.listMachines()).find((m) => m.label === instanceId);
/** Nodes a replacement of `first` may be, now: its GPUs, at least its CPUs, RAM and disk, within its per-GPU rate. */
const matches = async (first: Node) =>
  world.offers(
    (o) => o.gpuType === first.gpuType && o.gpuCount === first.gpuCount && o.cpus >= first.cpus && o.ramGb >= first.ramGb && o.diskGb >= first.diskGb && perGpuCents(o.rate, o.gpuCount) <= perGpuCents(first.rate, first.gpuCount),
  );
const used = new Set<string>();
/** A node with a cheaper node like it elsewhere (so "cheapest" means something), not used by an earlier test. */
async function firstNode(where: (node: Node) => boolean = () => true): Promise<Node> {
  for (const node of (await world.offers((o) => o.rate >= 40 && o.rate <= 400 && where(o))).reverse()) {
    if (used.has(`${node.gpuType}x${node.gpuCount}`)) continue;
    const like = await matches(node);
    if (like.length >= 2 && like.length <= 4 && perGpuCents(like[0]!.rate, like[0]!.gpuCount) < perGpuCents(node.rate, node.gpuCount)) {
      used.add(`${node.gpuType}x${node.gpuCount}`);
      return node;
    }
  }
  throw new Error('the sandbox market has no node with a cheaper one like it');
}
/** Webhook events are recorded when an endpoint listens: one does, so the test reads what would be sent. */
async function listen(token: string): Promise<void> {
  const res = await call('POST', '/v1/webhook-endpoints', { token, body: { url: 'https://hooks.example.com/gpu', events: ['instance.recovered', 'instance.recovery_failed'] } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}
async function eventsOf(tenantId: string): Promise<{ type: string; data: any }[]> {
  const em = world.api.plane.storage.orm.em.fork();
  return em.execute(`select type, data from webhook_events where tenant_id = ? order by created_at, id`, [tenantId]);
}
/** Rents with recovery and brings the machine up; seen running by a sweep 20 minutes in. */
async function rentRunning(token: string, node: Node, body: Record<string, unknown>): Promise<{ rented: any; seen: Date }> {
  const res = await world.rent(token, { node_id: node.id, termination_hours: 4, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  world.clock.advance(30_000);
  expect((await instance(token, res.body.id)).status).toBe('running');
  world.clock.advance(20 * MINUTE);
  await sweep();
  return { rented: res.body, seen: world.clock.now() };
}
const chaos = async (what: 'lose' | 'preempt', instanceId: string) => {
  const res = await call('POST', `/v1/operator/sandbox/machines/${instanceId}/${what}`, { headers: OPERATOR });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res;
};

describe('managed recovery', () => {
  it('after a lost machine: settled as before, the cheapest node like it rented in the same pass with the same options, each charged exactly', async () => {
    const { token, tenantId } = await world.fundedTenant(100);
    await listen(token);
    const node = await firstNode();
    const key = sshKeygen('ed25519').publicLine;
    const options = { ssh_public_key: key, env: { MODE: 'train' }, ports: [8888], startup_script: 'echo resumed' };
    const { rented, seen } = await rentRunning(token, node, { name: 'trainer', ...options, recovery: { max_attempts: 2 } });
    expect(rented).toMatchObject({ replaces: null, replaced_by: null, recovery: { max_attempts: 2, attempts_left: 2, failure: null, left_volume_ids: [] } });

    expect((await chaos('lose', rented.id)).status).toBe(200);
    world.clock.advance(5 * MINUTE);
    const pass = await sweep();
    expect(pass).toMatchObject({ gone_upstream: 1, machines_recovered: 1, recoveries_failed: 0 });
    expect(pass.steps.map((s: { name: string }) => s.name)).toContain('recoveries');

    const lost = await instance(token, rented.id);
    // settled as a lost machine always is: billed to when it was last seen running, the first hour the minimum
    expect(lost).toMatchObject({ status: 'terminated', terminated_at: seen.toISOString(), charged_cents: node.rate });
    expect(lost.replaced_by).toMatch(/^ins_/);
    const next = await instance(token, lost.replaced_by);
    const cheapest = (await matches(node))[0]!;
    expect(next).toMatchObject({
      replaces: rented.id,
      replaced_by: null,
      recovery: { max_attempts: 2, attempts_left: 1, failure: null, left_volume_ids: [] },
      name: 'trainer',
      gpu_type: node.gpuType,
      gpu_count: node.gpuCount,
      window_ends_at: rented.window_ends_at,
      charged_cents: next.rate_cents_per_hour,
    });
    expect(perGpuCents(next.rate_cents_per_hour, next.gpu_count)).toBe(perGpuCents(cheapest.rate, cheapest.gpuCount));
    expect(perGpuCents(next.rate_cents_per_hour, next.gpu_count)).toBeLessThan(perGpuCents(node.rate, node.gpuCount));
    expect((await machineOf(next.id))!.options).toMatchObject({ sshPublicKeys: [key], env: { MODE: 'train' }, ports: [8888], startupScript: 'echo resumed' });

    // the books: each machine's entries are what it says it cost, and nothing else moved
    const ledger = await world.ledger(token);
    const costOf = (id: string) => -ledger.filter((e) => e.reference === id).reduce((sum, e) => sum + e.amount_cents, 0);
    expect(costOf(rented.id)).toBe(node.rate);
    expect(costOf(next.id)).toBe(next.rate_cents_per_hour);
    expect((await world.balance(token)).balance_cents).toBe(10_000 - node.rate - next.rate_cents_per_hour);
    // the cap's commitment: the lost machine's cost, and the replacement's rate for the hours left to the same window end
    const hoursLeft = Math.ceil((Date.parse(rented.window_ends_at) - Date.parse(next.created_at)) / 3_600_000);
    expect((await call('GET', '/v1/tokens/self', { token })).body.committed_cents).toBe(node.rate + next.rate_cents_per_hour * hoursLeft);

    const events = await eventsOf(tenantId);
    expect(events.map((e) => e.type)).toEqual(['instance.recovered']);
    expect(events[0]!.data).toMatchObject({ instance_id: rented.id, replaced_by: next.id, attempts_left: 1 });

    // a second pass has nothing to recover; the replacement runs, is billed as any rental, and ends at the window
    world.clock.advance(30_000);
    expect(await sweep()).toMatchObject({ machines_recovered: 0, recoveries_failed: 0 });
    expect((await instance(token, next.id)).status).toBe('running');
    world.clock.set(new Date(Date.parse(rented.window_ends_at) + MINUTE));
    await sweep();
    const ended = await instance(token, next.id);
    expect(ended.status).toMatch(/^terminat/);
    const ranMinutes = Math.ceil((Date.parse(rented.window_ends_at) - Date.parse(next.created_at)) / MINUTE);
    expect(ended.charged_cents).toBe(Math.ceil((next.rate_cents_per_hour * ranMinutes) / 60));
    expect(ended.replaced_by).toBeNull();
  });

  it('never rents again a node that lost a machine of the chain, though it is the cheapest like it', async () => {
    const { token } = await world.fundedTenant(100);
    // the dearest of three or more nodes alike: every one of them is within its rate
    let node: Node | null = null;
    let like: Node[] = [];
    for (const candidate of (await world.offers((o) => o.rate >= 40 && o.rate <= 400)).reverse()) {
      if (used.has(`${candidate.gpuType}x${candidate.gpuCount}`)) continue;
      like = await matches(candidate);
      if (like.length >= 3 && like.at(-1)!.id === candidate.id && like[0]!.rate < candidate.rate) {
        node = candidate;
        used.add(`${candidate.gpuType}x${candidate.gpuCount}`);
        break;
      }
    }
    expect(node, 'a node with two cheaper like it').not.toBeNull();
    const reprice = async (id: string, perGpu: number) => {
      const res = await call('POST', `/v1/operator/sandbox/offers/${id}/price`, { headers: OPERATOR, body: { price_per_gpu_hour_usd: (perGpu / 100).toFixed(2) } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    };
    const { rented } = await rentRunning(token, node!, { recovery: { max_attempts: 3 } });
    // its node becomes the cheapest of them all, then loses the machine
    await reprice(node!.id, perGpuCents(like[0]!.rate, like[0]!.gpuCount) - 1);
    await chaos('lose', rented.id);
    world.clock.advance(5 * MINUTE);
    expect(await sweep()).toMatchObject({ gone_upstream: 1, machines_recovered: 1 });
    const first = await instance(token, (await instance(token, rented.id)).replaced_by);
    expect(first.node_id).not.toBe(node!.id);
    expect(first.node_id).toBe(like[0]!.id);

    // the replacement's node loses its machine too: the next goes to neither
    world.clock.advance(30_000);
    expect((await instance(token, first.id)).status).toBe('running');
    world.clock.advance(10 * MINUTE);
    await sweep();
    await chaos('lose', first.id);
    world.clock.advance(5 * MINUTE);
    expect(await sweep()).toMatchObject({ gone_upstream: 1, machines_recovered: 1 });
    const second = await instance(token, (await instance(token, first.id)).replaced_by);
    expect([node!.id, like[0]!.id]).not.toContain(second.node_id);
    expect(second.node_id).toBe(like[1]!.id);
    expect(second.recovery).toMatchObject({ attempts_left: 1 });
  });

  it('after a preemption, then stops at max_attempts: the last machine says why, and instance.recovery_failed is told', async () => {
    const { token, tenantId } = await world.fundedTenant(100);
    await listen(token);
    const node = await firstNode();
    const { rented, seen } = await rentRunning(token, node, { recovery: { max_attempts: 1 } });
    expect((await chaos('preempt', rented.id)).status).toBe(200);
    world.clock.advance(MINUTE);
    expect(await sweep()).toMatchObject({ preempted: 1, machines_recovered: 1 });
    const first = await instance(token, rented.id);
    expect(first).toMatchObject({ status: 'terminated', terminated_at: seen.toISOString(), charged_cents: node.rate });
    const second = await instance(token, first.replaced_by);
    expect(second.recovery).toMatchObject({ max_attempts: 1, attempts_left: 0, failure: null });

    world.clock.advance(30_000);
    expect((await instance(token, second.id)).status).toBe('running');
    world.clock.advance(10 * MINUTE);
    await sweep();
    expect((await chaos('preempt', second.id)).status).toBe(200);
    world.clock.advance(MINUTE);
    expect(await sweep()).toMatchObject({ preempted: 1, machines_recovered: 0, recoveries_failed: 1 });
    const last = await instance(token, second.id);
    expect(last).toMatchObject({ status: 'terminated', replaced_by: null, charged_cents: second.rate_cents_per_hour });
    expect(last.recovery.failure).toMatch(/^not replaced: no attempts left: it was replaced 1 times/);
    expect((await world.balance(token)).balance_cents).toBe(10_000 - node.rate - second.rate_cents_per_hour);
    expect(await sweep()).toMatchObject({ machines_recovered: 0, recoveries_failed: 0 });
    expect((await eventsOf(tenantId)).map((e) => e.type)).toEqual(['instance.recovered', 'instance.recovery_failed']);
  });

  it("stops at the token's cap: the replacement would commit more than the cap leaves; nothing is charged for it", async () => {
    const { token: root } = await world.fundedTenant(100);
    const node = await firstNode();
    // the first machine's two hours fit; once settled at one hour, what is left is short of a replacement's hours
    const child = await call('POST', '/v1/tokens', { token: root, body: { scopes: ['read', 'rent'], spend_limit_usd: ((node.rate * 2) / 100).toFixed(2) } });
    expect(child.status, JSON.stringify(child.body)).toBe(201);
    const { rented } = await rentRunning(child.body.token, node, { termination_hours: 2, recovery: { max_attempts: 3 } });
    expect((await chaos('lose', rented.id)).status).toBe(200);
    world.clock.advance(5 * MINUTE);
    expect(await sweep()).toMatchObject({ gone_upstream: 1, machines_recovered: 0, recoveries_failed: 1 });
    const lost = await instance(root, rented.id);
    expect(lost.replaced_by).toBeNull();
    expect(lost.recovery.failure).toMatch(/cap leaves/);
    expect((await world.balance(root)).balance_cents).toBe(10_000 - node.rate);
    expect((await call('GET', '/v1/instances', { token: root })).body).toHaveLength(1);
  });

  it("stops at the first machine's rate: every node like it now costs more", async () => {
    const { token } = await world.fundedTenant(100);
    const node = await firstNode();
    const like = await matches(node);
    const { rented } = await rentRunning(token, node, { recovery: { max_attempts: 3 } });
    for (const other of like) {
      const above = ((perGpuCents(node.rate, node.gpuCount) + 50) / 100).toFixed(2);
      expect((await call('POST', `/v1/operator/sandbox/offers/${other.id}/price`, { headers: OPERATOR, body: { price_per_gpu_hour_usd: above } })).status).toBe(200);
    }
    expect((await chaos('lose', rented.id)).status).toBe(200);
    world.clock.advance(5 * MINUTE);
    expect(await sweep()).toMatchObject({ machines_recovered: 0, recoveries_failed: 1 });
    const lost = await instance(token, rented.id);
    expect(lost.recovery.failure).toMatch(/no (other )?node of .* at or under \d+ cents per GPU-hour now/);
    expect((await world.balance(token)).balance_cents).toBe(10_000 - node.rate);
  });

  it("a rental by search is held to the search's max_price_per_gpu_hour instead of the first machine's rate", async () => {
    const { token } = await world.fundedTenant(100);
    const node = await firstNode();
    const ceiling = perGpuCents(node.rate, node.gpuCount) + 100;
    const search = { gpu_type: node.gpuType, gpu_count: node.gpuCount, max_price_per_gpu_hour: ceiling / 100 };
    const res = await world.rent(token, { search, termination_hours: 4, recovery: { max_attempts: 1 } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    world.clock.advance(30_000);
    expect((await instance(token, res.body.id)).status).toBe('running');
    world.clock.advance(20 * MINUTE);
    await sweep();
    // every node like the first now costs more than it did, yet within the search's ceiling
    const first = (await world.sandbox.listOffers()).find((o) => o.id === res.body.node_id)!;
    const firstPerGpu = perGpuCents(res.body.rate_cents_per_hour, res.body.gpu_count);
    const like = (await world.sandbox.listOffers()).filter((o) => o.gpuType === first.gpuType && o.gpuCount === first.gpuCount && o.cpus >= first.cpus && o.ramGb >= first.ramGb && o.diskGb >= first.diskGb);
    const dearer = firstPerGpu + 50;
    for (const other of like) {
      expect((await call('POST', `/v1/operator/sandbox/offers/${other.id}/price`, { headers: OPERATOR, body: { price_per_gpu_hour_usd: (dearer / 100).toFixed(2) } })).status).toBe(200);
    }
    expect(dearer).toBeLessThanOrEqual(ceiling);
    await chaos('lose', res.body.id);
    world.clock.advance(5 * MINUTE);
    expect(await sweep()).toMatchObject({ machines_recovered: 1, recoveries_failed: 0 });
    const next = await instance(token, (await instance(token, res.body.id)).replaced_by);
    expect(perGpuCents(next.rate_cents_per_hour, next.gpu_count)).toBeGreaterThan(firstPerGpu);
    expect(perGpuCents(next.rate_cents_per_hour, next.gpu_count)).toBeLessThanOrEqual(ceiling);
  });

  it('takes the volumes along only to the same provider and region; else the replacement names them as left', async () => {
    const { token } = await world.fundedTenant(100);
    const regions = new Set((await world.sandbox.volumeOffers()).map((v) => v.region));
    const node = await firstNode((o) => o.region !== null && regions.has(o.region));
    const volume = await call('POST', '/v1/volumes', { token, body: { name: 'data', size_gb: 10, provider: 'sandbox', region: node.region } });
    expect(volume.status, JSON.stringify(volume.body)).toBe(201);
    world.clock.advance(30_000);
    const { rented } = await rentRunning(token, node, { volume_ids: [volume.body.id], recovery: { max_attempts: 1 } });
    expect(rented.volume_ids).toEqual([volume.body.id]);
    await chaos('lose', rented.id);
    world.clock.advance(5 * MINUTE);
    expect(await sweep()).toMatchObject({ machines_recovered: 1 });
    const next = await instance(token, (await instance(token, rented.id)).replaced_by);
    const at = (await world.offers()).find((o) => o.id === next.node_id) ?? (await world.sandbox.listOffers()).find((o) => o.id === next.node_id)!;
    if (at.region === node.region) expect([next.volume_ids, next.recovery.left_volume_ids]).toEqual([[volume.body.id], []]);
    else expect([next.volume_ids, next.recovery.left_volume_ids]).toEqual([[], [volume.body.id]]);
    expect((await machineOf(next.id))!.options.volumeIds.length).toBe(next.volume_ids.length);
  });

  it('rents one replacement whoever takes the recovery up: two runners and a sweep at once', async () => {
    const { token } = await world.fundedTenant(100);
    const node = await firstNode();
    const { rented } = await rentRunning(token, node, { recovery: { max_attempts: 2 } });
    expect((await chaos('lose', rented.id)).status).toBe(200);
    world.clock.advance(5 * MINUTE);
    const { plane } = world.api;
    // the reconciler alone (the money half of a pass): it settles the machine and marks it due, renting nothing
    const reconciler = new Reconciler({ storage: plane.storage, clock: plane.clock, rentals: plane.services.rentals, provisioningDeadlineMs: 15 * MINUTE });
    const counts = { adopted: 0, failedProvisioning: 0, goneUpstream: 0, orphansTerminated: 0, terminationsRetried: 0, preempted: 0, errors: [] as string[] };
    await reconciler.reconcile(plane.providers.find((p) => p.name === 'sandbox')!, counts);
    expect(counts.goneUpstream).toBe(1);
    expect((await instance(token, rented.id)).replaced_by).toBeNull();

    const runner = () => new RecoveryStarter({ storage: plane.storage, clock: plane.clock, rentals: plane.services.rentals, market: plane.services.market, providers: plane.providers });
    const [a, b, pass] = await Promise.all([runner().recoverDue(), runner().recoverDue(), sweep()]);
    expect(a.recovered + b.recovered + pass.machines_recovered).toBe(1);
    const all: any[] = (await call('GET', '/v1/instances', { token })).body;
    expect(all).toHaveLength(2);
    const next = all.find((i) => i.id !== rented.id)!;
    expect(next.replaces).toBe(rented.id);
    expect((await world.balance(token)).balance_cents).toBe(10_000 - node.rate - next.rate_cents_per_hour);
  });
});
