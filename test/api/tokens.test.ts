import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../support/api.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startApi();
});
afterAll(async () => api?.close());

const createTenant = async () => {
  const res = await api.call('POST', '/v1/tenants', { body: { name: 'acme' } });
  expect(res.status).toBe(201);
  return res.body as { id: string; bootstrap_secret: string; created_at: string; name: string };
};

const bootstrap = (tenantId: string, secret: string | undefined, extra: object = {}) =>
  api.call('POST', '/v1/tokens', { body: { tenant_id: tenantId, ...(secret !== undefined && { bootstrap_secret: secret }), ...extra } });

const child = (token: string, body: object = {}) => api.call('POST', '/v1/tokens', { token, body });

describe('tenants and the bootstrap secret', () => {
  it('creates a tenant and answers its bootstrap secret once, valid 24 hours', async () => {
    const tenant = await createTenant();
    expect(tenant.id).toMatch(/^ten_/);
    expect(tenant.name).toBe('acme');
    expect(tenant.bootstrap_secret).toMatch(/^gcpboot_/);
    expect(new Date(tenant.created_at).toISOString()).toBe('2026-11-21T12:00:00.000Z');
  });

  it('refuses a blank name or unknown fields with 422', async () => {
    expect((await api.call('POST', '/v1/tenants', { body: { name: '  ' } })).status).toBe(422);
    const unknown = await api.call('POST', '/v1/tenants', { body: { name: 'x', owner: 'y' } });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors[0].msg).toMatch(/owner/);
  });

  it('exchanges the secret for a root token; the default scope is read', async () => {
    const tenant = await createTenant();
    const res = await bootstrap(tenant.id, tenant.bootstrap_secret);
    expect(res.status).toBe(201);
    expect(res.body.scopes).toEqual(['read']);
    expect(res.body.parent_id).toBeNull();
    expect(res.body.token).toMatch(/^gcp_tok_/);
  });

  it('answers 401 to a missing, wrong, reused or expired secret', async () => {
    const tenant = await createTenant();
    expect((await bootstrap(tenant.id, undefined)).status).toBe(401);
    expect((await api.call('POST', '/v1/tokens', { body: {} })).status).toBe(401);
    expect((await bootstrap(tenant.id, `${tenant.bootstrap_secret}x`)).status).toBe(401);
    expect((await bootstrap('ten_doesnotexist', tenant.bootstrap_secret)).status).toBe(401);
    expect((await bootstrap(tenant.id, tenant.bootstrap_secret)).status).toBe(201);
    const reused = await bootstrap(tenant.id, tenant.bootstrap_secret);
    expect(reused.status).toBe(401);
    expect(reused.body.detail).toMatch(/bootstrap secret/);

    const late = await createTenant();
    api.clock.advance(24 * 3600_000 + 1);
    try {
      expect((await bootstrap(late.id, late.bootstrap_secret)).status).toBe(401);
    } finally {
      api.clock.advance(-(24 * 3600_000 + 1));
    }
  });

  it('does not consume the secret when the request is refused', async () => {
    const tenant = await createTenant();
    expect((await bootstrap(tenant.id, tenant.bootstrap_secret, { expires_at: '2020-01-01T00:00:00Z' })).status).toBe(422);
    expect((await bootstrap(tenant.id, tenant.bootstrap_secret)).status).toBe(201);
  });

  it('yields exactly one token from 20 parallel uses of one secret', async () => {
    const tenant = await createTenant();
    const results = await Promise.all(Array.from({ length: 20 }, () => bootstrap(tenant.id, tenant.bootstrap_secret, { scopes: ['manage'] })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 401)).toHaveLength(19);
    const winner = results.find((r) => r.status === 201)!;
    const listed = await api.call('GET', '/v1/tokens', { token: winner.body.token });
    expect(listed.body).toHaveLength(1);
  });
});

describe('bearer authentication', () => {
  it('answers 401 to a missing, malformed, unknown or forged token', async () => {
    const { token } = await api.newTenant();
    expect((await api.call('GET', '/v1/tokens/self')).status).toBe(401);
    expect((await api.call('GET', '/v1/tokens/self', { headers: { authorization: 'Basic abc' } })).status).toBe(401);
    expect((await api.call('GET', '/v1/tokens/self', { token: 'nonsense' })).status).toBe(401);
    const forged = token.slice(0, -4) + (token.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    const res = await api.call('GET', '/v1/tokens/self', { token: forged });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ detail: expect.stringMatching(/token/) });
    expect((await api.call('GET', '/v1/tokens/self', { token })).status).toBe(200);
  });

  it('answers 401 once a token expires (by the clock)', async () => {
    const { token } = await api.newTenant();
    const short = await child(token, { expires_at: '2026-11-21T13:00:00Z' });
    expect(short.status).toBe(201);
    expect((await api.call('GET', '/v1/tokens/self', { token: short.body.token })).status).toBe(200);
    api.clock.set('2026-11-21T13:00:00Z');
    try {
      expect((await api.call('GET', '/v1/tokens/self', { token: short.body.token })).status).toBe(401);
    } finally {
      api.clock.set('2026-11-21T12:00:00Z');
    }
  });

  it('answers 403 when the token lacks the scope a route needs', async () => {
    const { token } = await api.newTenant();
    const reader = await child(token, { scopes: ['read'] });
    const res = await child(reader.body.token, {});
    expect(res.status).toBe(403);
    expect(res.body.detail).toMatch(/manage/);
  });
});

describe('issuing tokens from a token', () => {
  it('grants only scopes the caller holds (403 otherwise)', async () => {
    const { token } = await api.newTenant();
    const manager = await child(token, { scopes: ['read', 'manage'] });
    expect(manager.status).toBe(201);
    const escalate = await child(manager.body.token, { scopes: ['read', 'rent'] });
    expect(escalate.status).toBe(403);
    expect(escalate.body.detail).toMatch(/rent/);
    expect((await child(manager.body.token, { scopes: ['read'] })).status).toBe(201);
    expect((await child(manager.body.token, { scopes: ['root'] })).status).toBe(422);
  });

  it('refuses non-positive caps, hours under 1 and past expiry with 422 naming the field', async () => {
    const { token } = await api.newTenant();
    for (const [body, field] of [
      [{ spend_limit_usd: 0 }, 'spend_limit_usd'],
      [{ spend_limit_usd: -5 }, 'spend_limit_usd'],
      [{ spend_limit_usd: '1.234' }, 'spend_limit_usd'],
      [{ spend_limit_usd: 'ten' }, 'spend_limit_usd'],
      [{ max_rental_hours: 0 }, 'max_rental_hours'],
      [{ max_rental_hours: 1.5 }, 'max_rental_hours'],
      [{ expires_at: '2026-11-21T11:59:59Z' }, 'expires_at'],
      [{ expires_at: 'tomorrow' }, 'expires_at'],
    ] as const) {
      const res = await child(token, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.errors.map((e: { loc: string[] }) => e.loc.join('.'))).toContain(`body.${field}`);
    }
    const ok = await child(token, { spend_limit_usd: '19.99', max_rental_hours: 1, expires_at: '2026-11-21T12:00:01Z' });
    expect(ok.status).toBe(201);
    expect(ok.body.spend_limit_cents).toBe(1999);
  });

  it("never lets a child exceed the parent's remaining cap, max hours or expiry", async () => {
    const { token } = await api.newTenant();
    const parent = await child(token, {
      scopes: ['read', 'rent', 'manage'],
      spend_limit_usd: 100,
      max_rental_hours: 24,
      expires_at: '2026-12-01T00:00:00Z',
    });
    expect(parent.status).toBe(201);
    const p = parent.body.token;
    expect((await child(p, { spend_limit_usd: '100.01' })).status).toBe(422);
    expect((await child(p, { max_rental_hours: 25 })).status).toBe(422);
    expect((await child(p, { expires_at: '2026-12-01T00:00:01Z' })).status).toBe(422);

    const inherits = await child(p, { scopes: ['read', 'manage'] });
    expect(inherits.status).toBe(201);
    expect(inherits.body).toMatchObject({ spend_limit_cents: 10_000, max_rental_hours: 24, expires_at: '2026-12-01T00:00:00.000Z' });

    // A grandchild is bounded by every ancestor, not only its own parent.
    const middle = await child(p, { scopes: ['read', 'manage'], spend_limit_usd: 50 });
    const self = await api.call('GET', '/v1/tokens/self', { token: middle.body.token });
    expect(self.body).toMatchObject({ spend_limit_cents: 5000, remaining_cents: 5000, effective_max_rental_hours: 24 });
    expect((await child(middle.body.token, { spend_limit_usd: 60 })).status).toBe(422);
    expect((await child(middle.body.token, { spend_limit_usd: 50 })).status).toBe(201);
  });

  it('shows the calling token with its scopes, cap and tenant', async () => {
    const { token, tenantId } = await api.newTenant();
    const capped = await child(token, { scopes: ['read', 'rent'], spend_limit_usd: '12.50', name: 'agent' });
    const self = await api.call('GET', '/v1/tokens/self', { token: capped.body.token });
    expect(self.status).toBe(200);
    expect(self.body).toMatchObject({
      id: capped.body.id,
      tenant_id: tenantId,
      name: 'agent',
      scopes: ['read', 'rent'],
      spend_limit_cents: 1250,
      committed_cents: 0,
      remaining_cents: 1250,
    });
    expect(self.body.token).toBeUndefined();
  });
});

describe('listing and revoking', () => {
  it('revokes a token and all its descendants (401 after), leaving siblings', async () => {
    const { token } = await api.newTenant();
    const a = await child(token, { scopes: ['read', 'manage'] });
    const a1 = await child(a.body.token, { scopes: ['read', 'manage'] });
    const a11 = await child(a1.body.token, { scopes: ['read'] });
    const b = await child(token, { scopes: ['read'] });

    const del = await api.call('DELETE', `/v1/tokens/${a.body.id}`, { token });
    expect(del.status).toBe(204);
    expect(del.body).toBeUndefined();
    for (const t of [a, a1, a11]) expect((await api.call('GET', '/v1/tokens/self', { token: t.body.token })).status).toBe(401);
    expect((await api.call('GET', '/v1/tokens/self', { token: b.body.token })).status).toBe(200);
    expect((await api.call('GET', '/v1/tokens/self', { token })).status).toBe(200);

    const listed = await api.call('GET', '/v1/tokens', { token });
    const revoked = listed.body.filter((t: { revoked_at: string | null }) => t.revoked_at !== null).map((t: { id: string }) => t.id);
    expect(revoked.sort()).toEqual([a.body.id, a1.body.id, a11.body.id].sort());
  });

  it('lets a child see and revoke only its own subtree', async () => {
    const { token, tokenId } = await api.newTenant();
    const a = await child(token, { scopes: ['read', 'manage'] });
    const a1 = await child(a.body.token, { scopes: ['read'] });
    const b = await child(token, { scopes: ['read'] });
    const seen = await api.call('GET', '/v1/tokens', { token: a.body.token });
    expect(seen.body.map((t: { id: string }) => t.id).sort()).toEqual([a.body.id, a1.body.id].sort());
    expect((await api.call('DELETE', `/v1/tokens/${b.body.id}`, { token: a.body.token })).status).toBe(404);
    expect((await api.call('DELETE', `/v1/tokens/${tokenId}`, { token: a.body.token })).status).toBe(404);
    expect((await api.call('GET', '/v1/tokens/self', { token })).status).toBe(200);
  });

  it('lets any token revoke itself, but others only with manage', async () => {
    const { token } = await api.newTenant();
    const reader = await child(token, { scopes: ['read'] });
    const other = await child(token, { scopes: ['read'] });
    expect((await api.call('DELETE', `/v1/tokens/${other.body.id}`, { token: reader.body.token })).status).toBe(403);
    expect((await api.call('DELETE', `/v1/tokens/${reader.body.id}`, { token: reader.body.token })).status).toBe(204);
    expect((await api.call('GET', '/v1/tokens/self', { token: reader.body.token })).status).toBe(401);
  });

  it("answers 404 for another tenant's token id, and changes nothing", async () => {
    const mine = await api.newTenant('mine');
    const theirs = await api.newTenant('theirs');
    const res = await api.call('DELETE', `/v1/tokens/${theirs.tokenId}`, { token: mine.token });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: expect.stringMatching(/not found/) });
    expect((await api.call('GET', '/v1/tokens/self', { token: theirs.token })).status).toBe(200);
    const listed = await api.call('GET', '/v1/tokens', { token: mine.token });
    expect(listed.body.map((t: { id: string }) => t.id)).toEqual([mine.tokenId]);
  });

  it('answers 422 to a malformed token id', async () => {
    const { token } = await api.newTenant();
    expect((await api.call('DELETE', '/v1/tokens/not-an-id', { token })).status).toBe(422);
  });
});

describe('secrets at rest', () => {
  it('keeps no plaintext token or bootstrap secret in the database', async () => {
    const tenant = await createTenant();
    const root = await bootstrap(tenant.id, tenant.bootstrap_secret, { scopes: ['read', 'manage'] });
    const kid = await child(root.body.token, {});
    const dump = JSON.stringify(await api.plane.storage.execute('select * from tokens')) +
      JSON.stringify(await api.plane.storage.execute('select * from tenants'));
    for (const secret of [tenant.bootstrap_secret, root.body.token, kid.body.token]) {
      expect(dump).not.toContain(secret);
      // the random part whole (it may itself hold "_", so it is not the last "_"-separated piece)
      expect(dump).not.toContain(secret.replace(/^gcp_tok_[a-z0-9]+_|^gcpboot_/, ''));
    }
    expect(dump).toMatch(/[0-9a-f]{64}/);
  });
});
