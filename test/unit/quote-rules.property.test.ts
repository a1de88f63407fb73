import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../core/errors.ts';
import { QUOTE_VALID_MS, quotedRate, usableQuote, type RentalQuote } from '../../core/quotes/quote.ts';

const AT = new Date('2026-11-21T12:00:00.000Z');
const quoteAt = (rate: number, instanceId: string | null = null): RentalQuote => ({
  id: 'quo_test',
  tenantId: 'ten_a',
  tokenId: 'tok_a',
  nodeId: 'sandbox:100001',
  rateCentsPerHour: rate,
  perGpuCents: rate,
  chargedNowCents: rate,
  commitmentCents: rate,
  capRemainingAfterCents: null,
  search: null,
  terminationHours: null,
  name: null,
  createdAt: AT,
  expiresAt: new Date(AT.getTime() + QUOTE_VALID_MS),
  instanceId,
});
const codeOf = (run: () => unknown): string | null => {
  try {
    run();
    return null;
  } catch (error) {
    return error instanceof DomainError ? error.code : 'thrown';
  }
};

describe('a quote rents at no more than it said (docs/decisions.md, "Rent by specification and quotes")', () => {
  it('the rate charged is the live one when it is at most the quote, else PRICE_CHANGED: never above the quote', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 0, max: 10_000_000 }), (quoted, live) => {
        const code = codeOf(() => quotedRate(quoteAt(quoted), live));
        if (live > quoted) expect(code).toBe('PRICE_CHANGED');
        else expect(quotedRate(quoteAt(quoted), live)).toBe(live);
      }),
    );
  });

  it('usable until its expiry and while unused, a 409 otherwise', () => {
    fc.assert(
      fc.property(fc.integer({ min: -QUOTE_VALID_MS, max: 3 * QUOTE_VALID_MS }), fc.boolean(), (after, used) => {
        const code = codeOf(() => usableQuote(quoteAt(100, used ? 'ins_a' : null), new Date(AT.getTime() + after)));
        expect(code).toBe(used || after > QUOTE_VALID_MS ? 'CONFLICT' : null);
      }),
    );
  });
});
