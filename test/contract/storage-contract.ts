import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MikroStorage } from '../../adapters/storage/mikro-storage.ts';
import type { Storage } from '../../core/ports/storage.ts';
import type { Token } from '../../core/tenancy/token.ts';

let seq = 0;
const uid = (prefix: string) => `${prefix}_c${Date.now().toString(36)}${(seq++).toString(36)}`;
const at = (iso: string) => new Date(iso);

const tokenFor = (tenantId: string, over: Partial<Token> = {}): Token => ({
  id: uid('tok'),
  tenantId,
  role: null,
  name: null,
  scopes: ['read'],
  spendLimitCents: null,
  committedCents: 0,
  maxRentalHours: null,
  maxBurnCentsPerHour: null,
  expiresAt: null,
  parentId: null,
  ancestorIds: [],
  createdAt: at('2026-11-21T00:00:00Z'),
  revokedAt: null,
  idleTimeoutMinutes: null,
  idleDeadlineAt: null,
  idledAt: null,
  secretDigest: 'digest',
  kind: 'api',
  ...over,
});

/** What every Storage adapter must do, whatever database sits behind it. */
export function storageContract(name: string, open: () => Promise<{ storage: Storage & Pick<MikroStorage, 'execute'>; close(): Promise<void> }>): void {
  describe(`storage contract: ${name}`, () => {
    let storage: Storage & Pick<MikroStorage, 'execute'>;
    let close: () => Promise<void>;

    beforeAll(async () => {
      ({ storage, close } = await open());
    });
    afterAll(async () => close?.());

    const newTenant = async () => {
      const id = uid('ten');
      await storage.transaction((uow) =>
        uow.tenants.add(
          { id, name: 'tenant', createdAt: at('2026-11-21T00:00:00Z') },
          { tenantId: id, digest: 'boot-digest', expiresAt: at('2026-11-22T00:00:00Z'), usedAt: null },
        ),
      );
      return id;
    };

    it('keeps a tenant and its bootstrap secret, and marks the secret used', async () => {
      const id = await newTenant();
      expect(await storage.read((uow) => uow.tenants.get(id))).toEqual({ id, name: 'tenant', createdAt: at('2026-11-21T00:00:00Z') });
      const locked = await storage.transaction((uow) => uow.tenants.lockBootstrap(id));
      expect(locked).toEqual({ tenantId: id, digest: 'boot-digest', expiresAt: at('2026-11-22T00:00:00Z'), usedAt: null });
      await storage.transaction((uow) => uow.tenants.markBootstrapUsed(id, at('2026-11-21T01:00:00Z')));
      expect((await storage.transaction((uow) => uow.tenants.lockBootstrap(id)))?.usedAt).toEqual(at('2026-11-21T01:00:00Z'));
      expect(await storage.read((uow) => uow.tenants.get('ten_missing'))).toBeNull();
    });

    it('rolls a transaction back when its work throws', async () => {
      const id = uid('ten');
      await expect(
        storage.transaction(async (uow) => {
          await uow.tenants.add({ id, name: 'x', createdAt: new Date() }, { tenantId: id, digest: 'd', expiresAt: new Date(), usedAt: null });
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect(await storage.read((uow) => uow.tenants.get(id))).toBeNull();
    });

    it('lets only one of many concurrent transactions use a bootstrap secret', async () => {
      const id = await newTenant();
      const winners = await Promise.all(
        Array.from({ length: 10 }, () =>
          storage.transaction(async (uow) => {
            const bootstrap = await uow.tenants.lockBootstrap(id);
            if (bootstrap?.usedAt !== null) return 0;
            await uow.tenants.markBootstrapUsed(id, new Date());
            return 1;
          }),
        ),
      );
      expect(winners.reduce<number>((a, b) => a + b, 0)).toBe(1);
    });

    it('stores every token field exactly, money as whole numbers', async () => {
      const tenantId = await newTenant();
      const token = tokenFor(tenantId, {
        name: 'agent',
        scopes: ['read', 'rent'],
        spendLimitCents: 9_007_199_254_740,
        committedCents: 12_345,
        maxRentalHours: 48,
        maxBurnCentsPerHour: 500,
        expiresAt: at('2027-01-01T00:00:00Z'),
      });
      await storage.transaction((uow) => uow.tokens.add(token));
      expect(await storage.read((uow) => uow.tokens.findById(token.id))).toEqual(token);
      expect(await storage.read((uow) => uow.tokens.findById('tok_missing'))).toBeNull();
    });

    it('returns a chain nearest first, locked or not, and nothing for another tenant', async () => {
      const tenantId = await newTenant();
      const root = tokenFor(tenantId);
      const child = tokenFor(tenantId, { parentId: root.id, ancestorIds: [root.id] });
      const grandchild = tokenFor(tenantId, { parentId: child.id, ancestorIds: [root.id, child.id] });
      await storage.transaction(async (uow) => {
        for (const t of [root, child, grandchild]) await uow.tokens.add(t);
      });
      const chain = await storage.read((uow) => uow.tokens.chain(tenantId, grandchild.id));
      expect(chain.map((t) => t.id)).toEqual([grandchild.id, child.id, root.id]);
      const locked = await storage.transaction((uow) => uow.tokens.chain(tenantId, grandchild.id, { lock: true }));
      expect(locked.map((t) => t.id)).toEqual([grandchild.id, child.id, root.id]);
      const other = await newTenant();
      expect(await storage.read((uow) => uow.tokens.chain(other, grandchild.id))).toEqual([]);
    });

    it('lists a tenant oldest first, or one subtree, and revokes a subtree once', async () => {
      const tenantId = await newTenant();
      const root = tokenFor(tenantId, { createdAt: at('2026-11-21T00:00:00Z') });
      const a = tokenFor(tenantId, { parentId: root.id, ancestorIds: [root.id], createdAt: at('2026-11-21T00:01:00Z') });
      const a1 = tokenFor(tenantId, { parentId: a.id, ancestorIds: [root.id, a.id], createdAt: at('2026-11-21T00:02:00Z') });
      const b = tokenFor(tenantId, { parentId: root.id, ancestorIds: [root.id], createdAt: at('2026-11-21T00:03:00Z') });
      await storage.transaction(async (uow) => {
        for (const t of [root, b, a, a1]) await uow.tokens.add(t);
      });
      expect((await storage.read((uow) => uow.tokens.list(tenantId))).map((t) => t.id)).toEqual([root.id, a.id, a1.id, b.id]);
      expect((await storage.read((uow) => uow.tokens.list(tenantId, { under: a.id }))).map((t) => t.id)).toEqual([a.id, a1.id]);

      const when = at('2026-11-21T05:00:00Z');
      const revoked = await storage.transaction((uow) => uow.tokens.revokeSubtree(tenantId, a.id, when));
      expect(revoked.sort()).toEqual([a.id, a1.id].sort());
      expect(await storage.transaction((uow) => uow.tokens.revokeSubtree(tenantId, a.id, when))).toEqual([]);
      const after = await storage.read((uow) => uow.tokens.list(tenantId));
      expect(after.filter((t) => t.revokedAt !== null).map((t) => t.id).sort()).toEqual([a.id, a1.id].sort());
      expect(after.find((t) => t.id === a.id)?.revokedAt).toEqual(when);
    });

    it("orders a person's tenants by when they joined, links made in the same instant by the order they were made", async () => {
      const subject = uid('sub');
      const sameInstant = at('2026-11-21T00:00:00Z');
      const joined: string[] = [];
      // ids that sort against the order of joining: a tie broken by id would put the last joined first
      for (const [n, linkId] of (['idn_z', 'idn_m', 'idn_a'] as const).entries()) {
        const tenantId = await newTenant();
        const node = tokenFor(tenantId, { kind: 'link', role: 'owner', scopes: ['read', 'rent', 'billing', 'manage'], secretDigest: 'link' });
        await storage.transaction(async (uow) => {
          await uow.tokens.add(node);
          const link = { id: `${linkId}${uid('')}${n}`, provider: 'github', subject, tenantId, email: null, login: null, linkedByTokenId: null, createdAt: sameInstant, nodeId: node.id };
          expect(await uow.identities.add({ ...link, role: 'owner', spendLimitCents: null, maxRentalHours: null })).toBe(true);
        });
        joined.push(tenantId);
      }
      expect((await storage.read((uow) => uow.identities.tenantsOf('github', subject))).map((l) => l.tenantId)).toEqual(joined);
      expect((await storage.read((uow) => uow.identities.find('github', subject)))?.tenantId).toBe(joined[0]);
    });

    it('keeps no plaintext: the tokens table holds digests only', async () => {
      const rows = await storage.execute<{ column_name: string }[]>(
        `select column_name from information_schema.columns where table_name in ('tokens', 'tenants')`,
      );
      const columns = rows.map((r) => r.column_name);
      expect(columns).toContain('secret_digest');
      expect(columns).toContain('bootstrap_digest');
      expect(columns.filter((c) => /secret|token/.test(c) && !/digest|_id$/.test(c))).toEqual([]);
    });

    it('keeps one market summary, claimed by one refresh at a time and at most once per interval', async () => {
      const t0 = at('2026-11-21T12:00:00Z');
      const plus = (ms: number) => new Date(t0.getTime() + ms);
      const claim = (now: Date) =>
        storage.transaction((uow) => uow.marketSummary.claimRefresh(now, new Date(now.getTime() - 60_000), new Date(now.getTime() + 40_000)));
      expect(await storage.read((uow) => uow.marketSummary.latest())).toBeNull();

      const claims = await Promise.all(Array.from({ length: 8 }, () => claim(t0)));
      expect(claims.filter(Boolean)).toHaveLength(1);
      expect(await storage.read((uow) => uow.marketSummary.refreshRunning(plus(1_000)))).toBe(true);
      // the lease still runs, however long ago the last refresh started
      expect(await storage.transaction((uow) => uow.marketSummary.claimRefresh(plus(10_000), plus(10_000), plus(50_000)))).toBe(false);

      const summary = { gpusAvailable: 24, machines: 3, families: [{ gpuType: 'H100', gpuModel: 'H100 SXM', minPerGpuCents: 199, availableGpus: 24, machines: 3, maxVramGb: 80 }] };
      await storage.transaction((uow) => uow.marketSummary.completeRefresh(summary, plus(2_000)));
      expect(await storage.read((uow) => uow.marketSummary.latest())).toEqual({ summary, builtAt: plus(2_000) });
      expect(await storage.read((uow) => uow.marketSummary.refreshRunning(plus(3_000)))).toBe(false);
      expect(await claim(plus(30_000))).toBe(false); // too soon after the last start
      expect(await claim(plus(60_000))).toBe(true);
      await storage.transaction((uow) => uow.marketSummary.failRefresh('vast: 503'));
      expect(await storage.read((uow) => uow.marketSummary.latest())).toEqual({ summary, builtAt: plus(2_000) });

      // a claim whose holder vanished lapses with its lease
      expect(await claim(plus(120_000))).toBe(true);
      expect(await claim(plus(181_000))).toBe(true);
    });
  });
}
