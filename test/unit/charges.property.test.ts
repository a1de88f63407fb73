import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { accountFigures, owedBy, stopsAt } from '../../core/billing/account-view.ts';
import { costForMinutes, costUntil, nextBoundary, startedMinutes } from '../../core/billing/charges.ts';
import type { Instance } from '../../core/rentals/instance.ts';
import { settlementOf } from '../../core/rentals/end-billing.ts';

const HOUR = 3_600_000;
const T0 = Date.parse('2026-11-21T12:00:00Z');
const rate = fc.integer({ min: 0, max: 100_000 });

const instance = (fields: Partial<Instance>): Instance => ({
  id: 'ins_x',
  tenantId: 'ten_x',
  tokenId: 'tok_x',
  nodeId: 'sandbox:1',
  provider: 'sandbox',
  offerId: '1',
  name: null,
  status: 'running',
  gpuType: 'H100',
  gpuCount: 1,
  rateCentsPerHour: 100,
  createdAt: new Date(T0),
  startedAt: null,
  paidUntil: new Date(T0 + HOUR),
  removalScheduledAt: null,
  windowEndsAt: null,
  terminatedAt: null,
  machineId: 'm',
  sshHost: null,
  sshPort: null,
  idempotencyKey: null,
  requestDigest: null,
  chargedCents: 100,
  commitmentCents: 100,
  lastSeenAt: null,
  failure: null,
  launch: 'created',
  image: null,
  templateId: null,
  sshKeyId: null,
  volumeIds: [],
  ledgerNote: null,
  minimumMinutes: 60,
  preemptedAt: null,
  recovery: null,
  ...fields,
});

describe('the cost of a rental', () => {
  it('is ceil(rate x max(60, minutes) / 60): the first hour is the minimum, never a float', () => {
    fc.assert(
      fc.property(rate, fc.integer({ min: 0, max: 10_000_000 }), (r, minutes) => {
        const c = BigInt(costForMinutes(r, minutes));
        const exact = BigInt(r) * BigInt(Math.max(60, minutes));
        expect(c * 60n >= exact && (c - 1n) * 60n < exact).toBe(true);
        expect(costForMinutes(r, minutes)).toBeGreaterThanOrEqual(r);
      }),
    );
  });

  it('counts every started minute', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 * 24 * HOUR }), (ms) => {
        expect(startedMinutes(new Date(T0), new Date(T0 + ms))).toBe(Math.ceil(ms / 60_000));
      }),
    );
  });

  it('paid in blocks (full hours, the last pro rata) and settled at the end, sums to the cost of the minutes run', () => {
    fc.assert(
      fc.property(
        rate,
        fc.integer({ min: 0, max: 30 }), // blocks the sweep paid after the first hour
        fc.option(fc.integer({ min: 1, max: 40 * 60 }), { nil: null }), // removal, minutes after start
        fc.integer({ min: 0, max: 40 * 60 * 60 }), // when it ended, seconds after start
        (r, blocks, removalMinutes, endSeconds) => {
          const start = new Date(T0);
          const removal = removalMinutes === null ? null : new Date(T0 + removalMinutes * 60_000);
          let paidUntil = new Date(T0 + HOUR);
          let charged = costUntil(r, start, paidUntil); // the first hour, charged at creation
          const charges = [charged];
          for (let b = 0; b < blocks && (!removal || paidUntil < removal); b++) {
            const next = nextBoundary(paidUntil, removal);
            const charge = costUntil(r, start, next) - charged;
            expect(charge).toBeGreaterThanOrEqual(0);
            expect(charge).toBeLessThanOrEqual(r);
            charges.push(charge);
            charged += charge;
            paidUntil = next;
          }
          const end = new Date(T0 + endSeconds * 1000);
          const final = settlementOf(instance({ rateCentsPerHour: r, chargedCents: charged }), costUntil(r, start, end), 'final:x', end);
          const total = charges.reduce((s, c) => s + c, 0) - (final?.amountCents ?? 0);
          expect(total).toBe(costForMinutes(r, startedMinutes(start, end)));
          expect(total).toBe(Math.ceil((r * Math.max(60, Math.ceil((endSeconds * 1000) / 60_000))) / 60));
          if (final && final.amountCents > 0) expect(final.kind).toBe('refund');
        },
      ),
    );
  });
});

describe('account figures', () => {
  it('available is balance minus owed, and owed is what ran past the paid time', () => {
    fc.assert(
      fc.property(fc.integer({ min: -10_000, max: 100_000 }), rate, fc.integer({ min: 0, max: 5 * 60 }), (balance, r, minutesPast) => {
        const running = instance({ rateCentsPerHour: r, chargedCents: r });
        const now = new Date(T0 + HOUR + minutesPast * 60_000);
        const f = accountFigures(balance, [running], now);
        expect(f.owedCents).toBe(costForMinutes(r, 60 + minutesPast) - r);
        expect(f.availableCents).toBe(balance - f.owedCents);
        expect(f.burnCentsPerHour).toBe(r);
      }),
    );
  });

  it('stops_at for one machine is its paid time plus the whole hours the funds still buy', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 0, max: 1_000_000 }), (r, available) => {
        const running = instance({ rateCentsPerHour: r, chargedCents: r });
        const now = new Date(T0 + 10 * 60_000);
        const at = stopsAt(available, 0, [running], now); // not past its paid hour: nothing owed, balance = available
        const hours = Math.floor(available / r);
        const expected = T0 + HOUR + hours * HOUR;
        if (expected - now.getTime() > 366 * 24 * HOUR) expect(at).toBeNull();
        else expect(at?.getTime()).toBe(expected);
      }),
    );
  });

  it('more funds never stop the machines earlier; nothing running means no stops_at; paid to removal means none', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 1, max: 5_000 }), fc.integer({ min: 0, max: 3 * 60 })), { minLength: 1, maxLength: 5 }), fc.integer({ min: 0, max: 50_000 }), fc.integer({ min: 0, max: 50_000 }), (machines, a, b) => {
        const now = new Date(T0 + 30 * 60_000);
        const running = machines.map(([r, offset], i) =>
          instance({ id: `ins_${i}`, rateCentsPerHour: r, chargedCents: r, createdAt: new Date(T0 + offset * 60_000 - HOUR), paidUntil: new Date(T0 + offset * 60_000) }),
        );
        const [low, high] = a <= b ? [a, b] : [b, a];
        const owed = running.reduce((sum, i) => sum + owedBy(i, now), 0);
        const early = stopsAt(low, owed, running, now);
        const late = stopsAt(high, owed, running, now);
        if (early && late) expect(late.getTime()).toBeGreaterThanOrEqual(early.getTime());
        if (!early) expect(late).toBeNull();
        expect(accountFigures(a, [], now)).toMatchObject({ stopsAt: null, burnCentsPerHour: 0, runningMachines: 0 });
      }),
    );
    const paid = instance({ paidUntil: new Date(T0 + HOUR), removalScheduledAt: new Date(T0 + HOUR) });
    expect(accountFigures(0, [paid], new Date(T0 + 60_000))).toMatchObject({ paidToRemoval: true, stopsAt: null });
  });
});
