import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR, rentalWorld, type RentalWorld } from '../support/rentals.ts';
import { Rng } from '../../adapters/providers/sandbox/prng.ts';

/**
 * A simulated month of volume storage: 10 volumes over 3 tenants, made and deleted at random
 * times while the sweep runs now and then; every started hour of each volume is one record of size_gb
 * GB-hours at its GB-hour price, and each tenant is charged ceil(exact sum of size x hours x price), to the
 * cent, with one rounding. VOLUME_MONTH_SEED replays a run.
 */
const SEED = Number(process.env.VOLUME_MONTH_SEED ?? 42);
const HOUR = 3_600_000;
const MINUTE = 60_000;

/** Exact decimal text as integer micro-units (1e-6), test-side. */
const micro = (text: string): bigint => {
  const [whole, fraction = ''] = text.split('.');
  return BigInt(whole!) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
};

let world: RentalWorld;
beforeAll(async () => {
  world = await rentalWorld();
});
afterAll(() => world.close());

describe('a month of volume storage', () => {
  it('bills every started hour of every volume once, each tenant ceil(size x hours x price) to the cent', async () => {
    const rng = new Rng(SEED);
    const tenants = await Promise.all([0, 1, 2].map(() => world.fundedTenant(2_000)));
    const region = (await world.offers((o) => o.region !== null))[0]!.region!;
    const made: { id: string; tenant: number; deleted: boolean }[] = [];
    const sweep = async () => expect((await world.api.call('POST', '/v1/operator/sweep', { headers: OPERATOR })).body.errors).toEqual([]);
    const end = world.clock.now().getTime() + 30 * 24 * HOUR;
    while (world.clock.now().getTime() < end) {
      if (made.length < 10 && rng.chance(0.06)) {
        const tenant = rng.int(0, 2);
        const res = await world.api.call('POST', '/v1/volumes', { token: tenants[tenant]!.token, body: { name: `v${made.length}`, size_gb: rng.int(1, 500), provider: 'sandbox', region } });
        expect(res.status).toBe(201);
        made.push({ id: res.body.id, tenant, deleted: false });
      }
      const live = made.filter((v) => !v.deleted);
      if (live.length > 0 && rng.chance(0.02)) {
        const victim = live[rng.int(0, live.length - 1)]!;
        expect((await world.api.call('DELETE', `/v1/volumes/${victim.id}`, { token: tenants[victim.tenant]!.token })).status).toBe(204);
        victim.deleted = true;
      }
      world.clock.advance(rng.int(1, 180) * MINUTE);
      if (rng.chance(0.7)) await sweep();
    }
    for (const volume of made.filter((v) => !v.deleted)) {
      expect((await world.api.call('DELETE', `/v1/volumes/${volume.id}`, { token: tenants[volume.tenant]!.token })).status).toBe(204);
    }
    world.clock.advance(MINUTE);
    await sweep();
    await sweep(); // a second pass records nothing more
    expect(made).toHaveLength(10);

    const volumes = await world.api.plane.storage.execute<{ id: string; tenant_id: string; size_gb: number; price_usd_per_gb_hour: string; created_at: Date; deleted_at: Date }[]>(
      `select id, tenant_id, size_gb, price_usd_per_gb_hour, created_at, deleted_at from volumes where id = any(?::text[])`,
      [`{${made.map((v) => v.id).join(',')}}`],
    );
    for (const [index, tenant] of tenants.entries()) {
      const mine = volumes.filter((v) => v.tenant_id === tenant.tenantId);
      let exactMicroCents = 0n; // the exact sum of size x hours x price, in millionths of a cent
      for (const volume of mine) {
        const hours = Math.ceil((new Date(volume.deleted_at).getTime() - new Date(volume.created_at).getTime()) / HOUR);
        const records = await world.api.plane.storage.execute<{ quantity: string; unit_price_usd: string; started_at: Date }[]>(
          `select quantity::text, unit_price_usd::text, started_at from usage_records where reference = ? order by started_at`,
          [volume.id],
        );
        expect(records, `volume ${volume.id}: one record per started hour (VOLUME_MONTH_SEED=${SEED})`).toHaveLength(hours);
        for (const [k, record] of records.entries()) {
          expect(micro(record.quantity)).toBe(BigInt(volume.size_gb) * 1_000_000n);
          expect(micro(record.unit_price_usd)).toBe(micro(volume.price_usd_per_gb_hour));
          expect(new Date(record.started_at).getTime()).toBe(new Date(volume.created_at).getTime() + k * HOUR);
        }
        exactMicroCents += BigInt(volume.size_gb) * BigInt(hours) * micro(volume.price_usd_per_gb_hour) * 100n;
      }
      // one rounding: ceil of the exact sum, in cents
      const expected = (exactMicroCents + 999_999n) / 1_000_000n;
      const summary = (await world.api.call('GET', '/v1/metering/summary', { token: tenant.token })).body as { by_kind: Record<string, { amount_cents: number }> }[];
      const charged = summary.reduce((sum, period) => sum + (period.by_kind.volume_storage?.amount_cents ?? 0), 0);
      expect(BigInt(charged), `tenant ${index}: storage charged (VOLUME_MONTH_SEED=${SEED})`).toBe(expected);
      // settled to the ledger, once each (thousands of entries: summed where they are kept), and the books balance
      const [sums] = await world.api.plane.storage.execute<{ all: string; usage: string; records: string }[]>(
        `select sum(amount_cents)::text as all, coalesce(sum(amount_cents) filter (where kind = 'usage'), 0)::text as usage, count(*) filter (where kind = 'usage')::text as records
           from ledger_entries where tenant_id = ?`,
        [tenant.tenantId],
      );
      const account = (await world.api.call('GET', '/v1/billing/account', { token: tenant.token })).body;
      expect(Number(sums!.all)).toBe(account.balance_cents);
      expect(-Number(sums!.usage)).toBe(charged);
      expect(account).toMatchObject({ balance_cents: 200_000 - charged, owed_cents: 0 });
    }
  }, 300_000);
});
