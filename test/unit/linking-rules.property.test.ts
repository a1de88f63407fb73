import fc from 'fast-check';
import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import { SCOPES, type Scope } from '../../core/tenancy/scopes.ts';
import { ROLES, ROLE_SCOPES } from '../../core/tenancy/roles.ts';
import { isRoot, type Token } from '../../core/tenancy/token.ts';
import { childTokenTerms } from '../../core/tenancy/token-terms.ts';
import { clientKeyOf } from '../../hosts/http/client-address.ts';

/** Who is root (docs/decisions.md, "One tree of authority"), and which client a sign-in failure counts against. */

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
  role: null,
  ...terms,
});

const terms = fc.record({
  scopes: fc.subarray([...SCOPES] as Scope[]),
  spendLimitCents: fc.option(fc.integer({ min: 1, max: 1_000_000 }), { nil: null }),
  maxRentalHours: fc.option(fc.integer({ min: 1, max: 1000 }), { nil: null }),
  maxBurnCentsPerHour: fc.option(fc.integer({ min: 1, max: 100_000 }), { nil: null, freq: 3 }),
  expiresAt: fc.option(fc.date({ min: new Date('2026-01-01'), max: new Date('2030-01-01'), noInvalidDate: true }), { nil: null }),
});

describe('isRoot', () => {
  it('an API token is root exactly when it has every scope and no cap, hours, burn ceiling, expiry or idle timeout', () => {
    fc.assert(
      fc.property(terms, fc.option(fc.integer({ min: 5, max: 1440 }), { nil: null }), (t, idle) => {
        const candidate = token({ ...t, idleTimeoutMinutes: idle }, 0);
        const unlimited = t.spendLimitCents === null && t.maxRentalHours === null && t.maxBurnCentsPerHour === null && t.expiresAt === null && idle === null;
        expect(isRoot(candidate)).toBe(SCOPES.every((scope) => t.scopes.includes(scope)) && unlimited);
      }),
    );
  });

  it('a session is root exactly when its person is an owner or admin; a link never is (it is no bearer)', () => {
    for (const role of ROLES) {
      expect(isRoot(token({ kind: 'session', role, scopes: [...ROLE_SCOPES[role]], expiresAt: new Date('2030-01-01') }, 0))).toBe(role === 'owner' || role === 'admin');
      expect(isRoot(token({ kind: 'link', role, scopes: [...ROLE_SCOPES[role]] }, 0))).toBe(false);
    }
  });

  it('authority only narrows: no token issued under a credential that is not root is root, at any depth', () => {
    const now = new Date('2026-06-01T00:00:00Z');
    fc.assert(
      fc.property(terms, fc.array(fc.record({ scopes: fc.option(fc.subarray([...SCOPES] as Scope[], { minLength: 1 }), { nil: undefined }) }), { minLength: 1, maxLength: 4 }), (rootTerms, requests) => {
        const future = rootTerms.expiresAt && rootTerms.expiresAt > now ? rootTerms.expiresAt : null;
        let chain: Token[] = [token({ ...rootTerms, expiresAt: future, scopes: rootTerms.scopes.length > 0 ? rootTerms.scopes : ['read'] }, 0)];
        let aboveIsRoot = isRoot(chain[0]!);
        for (const [i, request] of requests.entries()) {
          let child: Token;
          try {
            child = token({ ...childTokenTerms(chain, request, now), parentId: chain[0]!.id, ancestorIds: [...chain[0]!.ancestorIds, chain[0]!.id] }, i + 1);
          } catch {
            return;
          }
          if (!aboveIsRoot) expect(isRoot(child)).toBe(false);
          aboveIsRoot = isRoot(child);
          chain = [child, ...chain];
        }
      }),
    );
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
