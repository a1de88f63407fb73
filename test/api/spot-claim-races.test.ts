import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpotClaimKeeper } from '../../core/spot/spot-claim-keeper.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { rentalWorld, type RentalWorld } from '../support/rentals.ts';

/**
 * Spot claims when the starts half of two passes runs side by side (two runners, or a runner and the automatic
 * sweep): whatever they race for, a claim never shows `active` with a machine whose first hour was not charged,
 * and a claim whose machine the provider refused is back to pending at once (its next node tried in the same pass),
 * not left active on a failed machine until a later pass ends it without a preemption.
 */
let database: TestDatabase;
let world: RentalWorld;
beforeAll(async () => {
  database = await freshDatabase();
  world = await rentalWorld({}, { database, faulty: true, sandbox: { spotPreemptionsPerHour: 0 } });
});
afterAll(async () => {
  await world?.close();
  await database?.drop();
});

const call = (...args: Parameters<RentalWorld['api']['call']>) => world.api.call(...args);
const usd = (cents: number) => (cents / 100).toFixed(2);
/** The starts half's spot step of one pass, as a runner of its own runs it (no lock: the starts take none). */
const startsOfAPass = () =>
  new SpotClaimKeeper({
    storage: world.api.plane.storage,
    clock: world.api.plane.clock,
    rentals: world.api.plane.services.rentals,
    market: world.api.plane.services.market,
    providers: world.api.plane.providers,
  }).pass();

/** What a claim shows, with its machine and that machine's entries on the ledger. */
async function standing(token: string, claimId: string) {
  const claim = (await call('GET', `/v1/spot-claims/${claimId}`, { token })).body;
  const machine = claim.instance_id ? (await call('GET', `/v1/instances/${claim.instance_id}`, { token })).body : null;
  const entries = ((await call('GET', '/v1/billing/ledger?limit=1000', { token })).body as { reference: string | null; kind: string; amount_cents: number }[]).filter(
    (e) => machine && e.reference === machine.id,
  );
  return { claim, machine, entries };
}

describe('two passes keeping spot claims side by side', () => {
  it("never show a claim active on a machine the provider refused (two claims, the node's last unit): it is pending again, or active on a machine that is charged", async () => {
    // a spot node with one unit left: both claims want it
    const [node] = await world.offers((o) => o.available === 1 && o.spotPriceUsdPerHour !== null && o.rate >= 40 && o.rate <= 800);
    expect(node, 'a spot node with one unit').toBeDefined();
    const bid = Math.ceil((Math.ceil(Number(node!.spotPriceUsdPerHour) * 100) + 1) / node!.gpuCount);
    const tenants = [await world.fundedTenant(100), await world.fundedTenant(100)];
    const claims: string[] = [];
    for (const { token } of tenants) {
      const made = await call('POST', '/v1/spot-claims', { token, body: { name: 'spot', node_id: node!.id, gpu_count: node!.gpuCount, max_price_per_gpu_hour: usd(bid), hours: 3 } });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      claims.push(made.body.id);
    }

    // the first create waits at the cloud until the other claim's machine has taken the unit: the first is refused
    const held = world.faults!.holdNextCreate();
    const otherAnswered = world.faults!.nextCreateAnswered();
    const passes = Promise.all([startsOfAPass(), startsOfAPass()]);
    await held.reached;
    await otherAnswered;
    held.open();
    const reports = await passes;

    const seen = await Promise.all(tenants.map(({ token }, i) => standing(token, claims[i]!)));
    for (const { claim, machine, entries } of seen) {
      if (claim.status === 'active') {
        // active: its machine is live and its first hour is charged, not refunded
        expect(machine.status, JSON.stringify({ claim, machine })).toMatch(/^(provisioning|running)$/);
        expect(entries.reduce((sum, e) => sum + e.amount_cents, 0)).toBe(-machine.rate_cents_per_hour);
        expect(claim.charged_cents).toBe(machine.rate_cents_per_hour);
      } else {
        expect(claim, JSON.stringify({ claim, machine })).toMatchObject({ status: 'pending', instance_id: null, charged_cents: 0 });
      }
    }
    expect(seen.filter(({ claim, machine }) => claim.status === 'active' && machine.node_id === node!.id)).toHaveLength(1);
    expect(reports.reduce((sum, r) => sum + r.preempted, 0)).toBe(0);
    // a later pass finds nothing to end: no machine of a claim ends unseen
    const later = await Promise.all([startsOfAPass(), startsOfAPass()]);
    expect(later.reduce((sum, r) => sum + r.preempted, 0)).toBe(0);
    for (const [i, { claim }] of seen.entries()) {
      const again = (await call('GET', `/v1/spot-claims/${claims[i]!}`, { token: tenants[i]!.token })).body;
      expect(again.instance_id).toBe(claim.status === 'active' ? claim.instance_id : again.instance_id);
      expect(again.preemptions).toBe(0);
    }
  });
});
