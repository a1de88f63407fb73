import fc from 'fast-check';
import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import { SCOPES, type Scope } from '../../core/tenancy/scopes.ts';
import { linksPeople, type Token } from '../../core/tenancy/token.ts';
import { clientKeyOf } from '../../hosts/http/client-address.ts';

/** Who may link a person (docs/decisions.md, "Linking people"), and which client a sign-in failure counts against. */

const token = (terms: Partial<Token>, i: number): Token => ({
  id: `tok_${i}`,
  tenantId: 'ten_a',
  kind: 'api',
  name: null,
  scopes: ['read', 'manage'],
  spendLimitCents: null,
  committedCents: 0,
  maxRentalHours: null,
  maxBurnCentsPerHour: null,
  expiresAt: null,
  parentId: null,
  ancestorIds: [],
  createdAt: new Date(0),
  revokedAt: null,
  idleTimeoutMinutes: null,
  idleDeadlineAt: null,
  idledAt: null,
  secretDigest: '',
  ...terms,
});

const terms = fc.record({
  scopes: fc.subarray([...SCOPES] as Scope[]),
  spendLimitCents: fc.option(fc.integer({ min: 1, max: 1_000_000 }), { nil: null }),
  maxRentalHours: fc.option(fc.integer({ min: 1, max: 1000 }), { nil: null }),
  maxBurnCentsPerHour: fc.option(fc.integer({ min: 1, max: 100_000 }), { nil: null, freq: 3 }),
  expiresAt: fc.option(fc.date({ min: new Date('2026-01-01'), max: new Date('2030-01-01'), noInvalidDate: true }), { nil: null }),
});

describe('linksPeople', () => {
  it('an API token links people exactly when it has manage and no cap, no hours, no burn ceiling and no expiry anywhere in its chain', () => {
    fc.assert(
      fc.property(fc.array(terms, { minLength: 1, maxLength: 5 }), (chainTerms) => {
        const chain = chainTerms.map((t, i) => token(t, i));
        const unlimited = chain.every((t) => t.spendLimitCents === null && t.maxRentalHours === null && t.maxBurnCentsPerHour === null && t.expiresAt === null);
        expect(linksPeople(chain)).toBe(chain[0]!.scopes.includes('manage') && unlimited);
      }),
    );
  });

  it('a console session always links (a person already in the tenant); an empty chain never does', () => {
    const session = token({ kind: 'session', scopes: [...SCOPES], expiresAt: new Date('2030-01-01') }, 0);
    expect(linksPeople([session])).toBe(true);
    expect(linksPeople([])).toBe(false);
  });
});

describe('clientKeyOf', () => {
  const of = (ip: string) => clientKeyOf({ ip, socket: {} } as unknown as Request);

  it('keys IPv4 by the address, IPv4-mapped IPv6 as IPv4, and IPv6 by its /64', () => {
    expect(of('203.0.113.7')).toBe('203.0.113.7');
    expect(of('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(of('2001:db8:1:2:3:4:5:6')).toBe('2001:0db8:0001:0002::/64');
    expect(of('2001:db8:1:2::9')).toBe('2001:0db8:0001:0002::/64');
    expect(of('::1')).toBe('0000:0000:0000:0000::/64');
  });

  it('any two addresses of one /64 are one client; addresses of different /64s are two', () => {
    const group = fc.integer({ min: 0, max: 0xffff }).map((n) => n.toString(16));
    fc.assert(
      fc.property(fc.array(group, { minLength: 8, maxLength: 8 }), fc.array(group, { minLength: 4, maxLength: 4 }), (address, host) => {
        const other = [...address.slice(0, 4), ...host];
        expect(of(address.join(':'))).toBe(of(other.join(':')));
        const elsewhere = [...address];
        elsewhere[3] = ((parseInt(address[3]!, 16) + 1) % 0x10000).toString(16);
        expect(of(elsewhere.join(':'))).not.toBe(of(address.join(':')));
      }),
    );
  });
});
