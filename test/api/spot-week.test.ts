import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rateCentsPerHour } from '../../core/market/pricing.ts';
import { freshPostgres, postgresReachable, type TestDatabase } from '../support/database.ts';
import { OPERATOR, rentalWorld, type RentalWorld } from '../support/rentals.ts';
import { Rng } from '../../adapters/providers/sandbox/prng.ts';

/**
 * A simulated week of the sandbox's spot market with 20 spot claims: prices walk hourly from the seed,
 * machines are preempted when the price passes their bid and at seeded random moments, tenants release claims
 * now and then, and the sweep runs every few minutes. Afterwards every machine cost exactly its started minutes
 * at the spot price of its rental, no claim paid above its bid or held two machines at once, and released claims
 * hold none. SPOT_WEEK_SEED replays one run (it also seeds the sandbox's market).
 */
const SEED = Number(process.env.SPOT_WEEK_SEED ?? 20261124);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const WEEK = 7 * 24 * HOUR;
const CLAIMS = 20;

interface Row {
  id: string;
  tenant_id: string;
  status: string;
  gpu_count: number;
  bid_cents_per_gpu_hour: string;
  hours: number | null;
  ends_at: Date | null;
  preemptions: number;
  commitment_cents: string;
  token_id: string;
  ended_at: Date | null;
}

interface Machine {
  id: string;
  claim: string;
  status: string;
  rate_cents_per_hour: string;
  gpu_count: number;
  created_at: Date;
  started_at: Date | null;
  terminated_at: Date | null;
  charged_cents: string;
  preempted_at: Date | null;
  minimum_minutes: number;
}

const onPostgres = await postgresReachable();
let database: TestDatabase;
let world: RentalWorld;
let admin: pg.Client;
beforeAll(async () => {
  if (!onPostgres) return;
  database = await freshPostgres();
  world = await rentalWorld({}, { database, sandbox: { seed: SEED % 0xffff_ffff, offers: 400 } });
  admin = new pg.Client({ connectionString: (database.target as { url: string }).url });
  await admin.connect();
});
afterAll(async () => {
  await admin?.end();
  await world?.close();
  await database?.drop();
});

const machinesOf = async (): Promise<Machine[]> =>
  (
    await admin.query(
      `select i.id, split_part(i.idempotency_key, ':', 1) as claim, i.status, i.rate_cents_per_hour, i.gpu_count, i.created_at, i.started_at, i.terminated_at,
              i.charged_cents, i.preempted_at, i.minimum_minutes
         from instances i where i.idempotency_key like 'spc\\_%:%' order by i.created_at, i.id`,
    )
  ).rows;
const claimsOf = async (): Promise<Row[]> => (await admin.query(`select * from spot_claims order by id`)).rows;

describe.runIf(onPostgres)('a simulated week of spot claims (PostgreSQL)', () => {
  it('charges every machine its started minutes at the spot price of its rental, never above the bid, one machine at a time', { timeout: 600_000 }, async () => {
    const rng = new Rng(SEED);
    const cloud = world.sandbox.cloud;
    const call = world.api.call;
    const start = world.clock.now().getTime();
    const tenants = [] as { token: string; tenantId: string }[];
    for (let t = 0; t < 5; t++) tenants.push(await world.fundedTenant(20_000));
    // an agent token with a cap beside each root: its claims need hours
    const agents = await Promise.all(
      tenants.map(async (t) => (await call('POST', '/v1/tokens', { token: t.token, body: { scopes: ['read', 'rent'], spend_limit_usd: '3000' } })).body.token as string),
    );
    const tokenOfClaim = new Map<string, string>();
    const rateAtRental = new Map<string, string>(); // instance id -> the sandbox's price of its machine
    const released = new Set<string>();
    let made = 0;
    let preemptionsSeen = 0;

    const createClaim = async () => {
      const offers = (await world.offers()).filter((o) => o.spotPriceUsdPerHour && rateCentsPerHour(o.priceUsdPerHour, 0) <= 2_000);
      const offer = rng.pick(offers);
      const spotPerGpu = Math.ceil(rateCentsPerHour(offer.spotPriceUsdPerHour!, 0) / offer.gpuCount);
      // from under the spot price (it waits) to well over it (it rides out the walk)
      const bid = Math.max(1, Math.round(spotPerGpu * (0.9 + rng.int(0, 80) / 100)));
      const capped = rng.chance(0.5);
      const tenant = rng.int(0, tenants.length - 1);
      const token = capped ? agents[tenant]! : tenants[tenant]!.token;
      const hours = capped || rng.chance(0.5) ? rng.int(2, 72) : undefined;
      const where = rng.chance(0.5) ? { node_id: offer.id } : { search: { gpu_type: offer.gpuType, provider: 'sandbox' } };
      const res = await call('POST', '/v1/spot-claims', {
        token,
        body: { name: `claim ${made}`, ...where, gpu_count: offer.gpuCount, max_price_per_gpu_hour: (bid / 100).toFixed(2), ...(hours && { hours }) },
      });
      if (res.status === 402) return; // the agent's cap is taken by its claims so far
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      tokenOfClaim.set(res.body.id, token);
      made++;
    };

    /** Invariants that hold at every moment: one machine at most per claim, none for an ended claim. */
    const checkNow = async () => {
      const billed = (await machinesOf()).filter((m) => ['provisioning', 'running', 'rebooting'].includes(m.status));
      const perClaim = new Map<string, number>();
      for (const m of billed) perClaim.set(m.claim, (perClaim.get(m.claim) ?? 0) + 1);
      for (const [claim, count] of perClaim) expect(count, `claim ${claim} holds ${count} machines`).toBe(1);
      const ended = (await claimsOf()).filter((c) => c.status === 'released' || c.status === 'expired');
      for (const c of ended) expect(perClaim.get(c.id) ?? 0, `ended claim ${c.id} holds a machine`).toBe(0);
      for (const m of await cloud.listMachines()) if (m.label && !rateAtRental.has(m.label)) rateAtRental.set(m.label, m.priceUsdPerHour);
    };

    while (world.clock.now().getTime() - start < WEEK) {
      if (made < CLAIMS && (made < 8 || rng.chance(0.1))) await createClaim();
      if (rng.chance(0.02)) {
        const open = (await claimsOf()).filter((c) => c.status === 'pending' || c.status === 'active');
        if (open.length > 0) {
          const victim = rng.pick(open);
          const res = await call('DELETE', `/v1/spot-claims/${victim.id}`, { token: tokenOfClaim.get(victim.id)! });
          expect(res.status, JSON.stringify(res.body)).toBe(200);
          expect(res.body.status).toBe('released');
          released.add(victim.id);
        }
      }
      world.clock.advance(rng.int(3, 40) * MINUTE + rng.int(0, 59_000));
      const pass = (await call('POST', '/v1/operator/sweep', { headers: OPERATOR })).body;
      expect(pass.errors, JSON.stringify(pass.errors)).toEqual([]);
      preemptionsSeen += pass.preempted;
      await checkNow();
    }
    // the end of the week: every claim left is released
    for (const c of await claimsOf()) {
      if (c.status !== 'pending' && c.status !== 'active') continue;
      expect((await call('DELETE', `/v1/spot-claims/${c.id}`, { token: tokenOfClaim.get(c.id)! })).status).toBe(200);
      released.add(c.id);
    }
    world.clock.advance(MINUTE);
    expect((await call('POST', '/v1/operator/sweep', { headers: OPERATOR })).body.errors).toEqual([]);
    await checkNow();

    const claims = await claimsOf();
    const machines = await machinesOf();
    expect(claims.length).toBe(CLAIMS);
    expect(machines.length).toBeGreaterThan(CLAIMS);
    expect(preemptionsSeen).toBeGreaterThan(0);
    expect(claims.filter((c) => c.status === 'expired').length + released.size).toBe(CLAIMS);
    const ledger = (await admin.query(`select reference, amount_cents, description from ledger_entries where reference like 'ins\\_%'`)).rows;
    for (const claim of claims) {
      const own = machines.filter((m) => m.claim === claim.id);
      const bid = Number(claim.bid_cents_per_gpu_hour);
      let spent = 0;
      for (const [i, m] of own.entries()) {
        const rate = Number(m.rate_cents_per_hour);
        expect(m.minimum_minutes).toBe(0);
        // the market's spot price at rental, as the sandbox charges the machine, never above the bid
        expect(rate, `${m.id}`).toBe(rateCentsPerHour(rateAtRental.get(m.id)!, 0));
        expect(Math.ceil(rate / m.gpu_count), `${m.id} of ${claim.id}`).toBeLessThanOrEqual(bid);
        // the model: its started minutes x the rate at rental, no minimum; nothing when it never ran
        expect(['terminated', 'failed']).toContain(m.status);
        const minutes = m.started_at === null || m.status === 'failed' ? 0 : Math.ceil((m.terminated_at!.getTime() - m.created_at.getTime()) / MINUTE);
        const model = Number((BigInt(rate) * BigInt(minutes) + 59n) / 60n);
        expect(Number(m.charged_cents), `${m.id}`).toBe(model);
        const entries = ledger.filter((e) => e.reference === m.id);
        expect(entries.reduce((sum, e) => sum + Number(e.amount_cents), model), `${m.id}`).toBe(0);
        for (const e of entries) expect(e.description).toContain(`spot claim ${claim.id}`);
        // one machine at a time: each starts after the one before ended
        if (i > 0) expect(m.created_at.getTime()).toBeGreaterThanOrEqual(own[i - 1]!.terminated_at!.getTime());
        if (claim.ends_at) expect(m.terminated_at!.getTime()).toBeLessThanOrEqual(claim.ends_at.getTime());
        spent += model;
      }
      expect(claim.preemptions).toBe(own.filter((m) => m.preempted_at !== null).length);
      const shown = (await call('GET', `/v1/spot-claims/${claim.id}`, { token: tokenOfClaim.get(claim.id)! })).body;
      expect(shown.charged_cents).toBe(spent);
      // an ended claim keeps on its token only what it spent, at most its commitment
      const held = claim.hours === null ? 0 : bid * claim.gpu_count * claim.hours;
      expect(Number(claim.commitment_cents)).toBe(Math.min(held, spent));
    }
    // what the week did, for a reader replaying a seed
    console.info(`spot week ${SEED}: ${claims.length} claims, ${machines.length} machines, ${preemptionsSeen} preemptions, ${released.size} released, ${claims.filter((c) => c.status === 'expired').length} expired`);
    // nothing of ours is left upstream
    expect((await cloud.listMachines()).filter((m) => m.status !== 'terminated' && m.label?.startsWith('ins_'))).toEqual([]);
    // each capped agent's commitment is what its ended claims spent
    for (const agent of agents) {
      const own = claims.filter((c) => tokenOfClaim.get(c.id) === agent);
      expect((await call('GET', '/v1/tokens/self', { token: agent })).body.committed_cents).toBe(own.reduce((sum, c) => sum + Number(c.commitment_cents), 0));
    }
  });
});
