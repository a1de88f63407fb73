import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { peopleOf } from '../support/people.ts';
import { OPERATOR, rentalWorld, type RentalWorld } from '../support/rentals.ts';
import { startSmtpInbox, type SmtpInbox } from '../support/smtp-inbox.ts';

/**
 * An endpoint delivers only while the credential that registered it could still register it (docs/decisions.md, "One
 * tree of authority"; docs/webhooks.md): once it, or a node above it, ends (revoked, expired, timed out idle, its
 * person removed) or its person becomes a member, the endpoint is disabled with a reason and hears nothing more, not
 * even what was already waiting; root takes it over to have it deliver again. Everything over HTTP, events told by the
 * tenant's deposits.
 */
const HOUR = 3_600_000;

let world: RentalWorld;
let inbox: SmtpInbox;
let hooks: Hooks;

/** One local receiver for every endpoint: each has a path of its own, and what each heard is kept by path. */
class Hooks {
  private server!: Server;
  private base = '';
  private readonly heard = new Map<string, string[]>();
  private seq = 0;

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const types = this.heard.get(req.url!) ?? [];
        types.push((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type: string }).type);
        this.heard.set(req.url!, types);
        res.writeHead(204).end();
      });
    });
    this.server.listen(0, '127.0.0.1');
    await new Promise((resolve) => this.server.once('listening', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** A new path: the URL to register, and the types it has heard so far (sorted: attempts go out several at once). */
  path(name: string): { url: string; heard: () => string[] } {
    const path = `/${name}-${this.seq++}`;
    return { url: `${this.base}${path}`, heard: () => [...(this.heard.get(path) ?? [])].sort() };
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

beforeAll(async () => {
  inbox = await startSmtpInbox();
  hooks = await new Hooks().start();
  world = await rentalWorld({ auth: { mail: { smtpUrl: inbox.url, from: 'no-reply@cp.test' } }, secretsKey: randomBytes(32), webhooks: { allowHttp: true, delivery: false } });
});
afterAll(async () => {
  await world?.close();
  await hooks?.close();
  await inbox?.close();
});

const { call, person, signIn, child, people, ownedTenant } = peopleOf(() => world, () => inbox);
const deliver = () => world.api.plane.services.webhookDeliveries.deliverDue();
const sweep = async () => expect((await world.api.call('POST', '/v1/operator/sweep', { headers: OPERATOR })).status).toBe(200);
const selfId = async (token: string) => (await call('GET', '/v1/tokens/self', token)).body.id as string;

/** Registers an endpoint as `token` at a path of its own: its id, and what its path heard. */
async function register(token: string, name: string, events?: string[]): Promise<{ id: string; heard: () => string[] }> {
  const { url, heard } = hooks.path(name);
  const made = await call('POST', '/v1/webhook-endpoints', token, { url, ...(events && { events }) });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  return { id: made.body.id, heard };
}
const endpoint = async (token: string, id: string) => (await call('GET', `/v1/webhook-endpoints/${id}`, token)).body;
const attempts = async (token: string, id: string) => (await call('GET', `/v1/webhook-endpoints/${id}/deliveries`, token)).body as { type: string; status: string; error: string | null }[];

/** A deposit confirmed by the operator: `deposit.confirmed`, told to every endpoint of the tenant. */
async function deposit(root: string): Promise<void> {
  const made = await call('POST', '/v1/billing/deposits', root, { amount_usd: 5, reference: 'wire' });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  expect((await world.api.call('POST', `/v1/billing/deposits/${made.body.id}/confirm`, { headers: OPERATOR })).status).toBe(200);
}

/** An admin linked by root, signed in: their session, the token it issued with manage, and an endpoint registered by each. */
async function adminWithEndpoints(root: string) {
  const email = await person('admin');
  expect((await signIn(email, root)).status).toBe(200);
  const session = (await signIn(email)).body.token as string;
  const token = await child(session, { scopes: ['read', 'manage'] });
  const id = (await people(root)).find((p) => p.email === email)!.id;
  return { id, session, token, bySession: await register(session, 'session'), byToken: await register(token.token, 'token') };
}

const disabledFor = (reason: RegExp) => ({ status: 'disabled', disabled_at: world.clock.now().toISOString(), disabled_reason: expect.stringMatching(reason) });

describe('an endpoint lives as long as the authority that registered it', () => {
  it("a person removed: the endpoints their session and their token registered hear nothing more, not even their removal, and say why; root's hears on", async () => {
    const { root } = await ownedTenant();
    const byRoot = await register(root, 'root');
    const admin = await adminWithEndpoints(root);
    await deposit(root);
    await deliver();
    expect(byRoot.heard()).toEqual(['deposit.confirmed', 'identity.linked']);
    for (const hook of [admin.bySession, admin.byToken]) expect(hook.heard()).toEqual(['deposit.confirmed']);

    expect((await call('DELETE', `/v1/identities/${admin.id}`, root)).status).toBe(204);
    await deposit(root);
    await deliver();
    expect(byRoot.heard()).toEqual(['deposit.confirmed', 'deposit.confirmed', 'identity.linked', 'identity.unlinked']);
    for (const hook of [admin.bySession, admin.byToken]) {
      expect(hook.heard()).toEqual(['deposit.confirmed']);
      expect(await endpoint(root, hook.id)).toMatchObject(disabledFor(/^the credential that registered it ended: its person was removed from the tenant$/));
      expect((await attempts(root, hook.id)).map((a) => a.status)).toEqual(['succeeded']);
    }
    expect(await endpoint(root, byRoot.id)).toMatchObject({ status: 'active', disabled_at: null, disabled_reason: null });
  });

  it('a person made a member: the same, at once (their session and token live on, within the role)', async () => {
    const { root } = await ownedTenant();
    const byRoot = await register(root, 'root');
    const admin = await adminWithEndpoints(root);
    expect((await call('PATCH', `/v1/identities/${admin.id}`, root, { role: 'member' })).status).toBe(200);
    await deposit(root);
    await deliver();
    expect(byRoot.heard()).toEqual(['deposit.confirmed', 'identity.linked', 'identity.updated']);
    for (const hook of [admin.bySession, admin.byToken]) {
      expect(hook.heard()).toEqual([]);
      expect(await endpoint(root, hook.id)).toMatchObject(disabledFor(/^the credential that registered it is now a member's, and a member's manage does not reach the whole tenant$/));
    }
    expect((await call('GET', '/v1/tokens/self', admin.token.token)).status).toBe(200);
    // made an admin again, nothing comes back by itself: someone who may register endpoints takes them over
    expect((await call('PATCH', `/v1/identities/${admin.id}`, root, { role: 'admin' })).status).toBe(200);
    expect((await endpoint(root, admin.bySession.id)).status).toBe('disabled');
  });

  it('a registering token revoked: its endpoint hears nothing more, and what was already waiting for it is not sent', async () => {
    const { root } = await ownedTenant();
    const byRoot = await register(root, 'root');
    const ops = await child(root, { scopes: ['read', 'manage'] });
    const byOps = await register(ops.token, 'ops');
    await deposit(root);
    expect((await call('DELETE', `/v1/tokens/${ops.id}`, root)).status).toBe(204);
    await deliver();
    expect(byRoot.heard()).toEqual(['deposit.confirmed']);
    expect(byOps.heard()).toEqual([]);
    expect(await endpoint(root, byOps.id)).toMatchObject(disabledFor(new RegExp(`^the credential that registered it ended: token ${ops.id} was revoked$`)));
    expect((await attempts(root, byOps.id)).map((a) => a.status)).toEqual(['abandoned']);
    // a token revoked above it ends it the same way
    const parent = await child(root, { scopes: ['read', 'manage'] });
    const below = await register((await child(parent.token, { scopes: ['manage'] })).token, 'below');
    expect((await call('DELETE', `/v1/tokens/${parent.id}`, root)).status).toBe(204);
    expect(await endpoint(root, below.id)).toMatchObject(disabledFor(new RegExp(`token ${parent.id} was revoked$`)));
  });

  it('a registering token expired, nobody acting: its next delivery is withheld and the endpoint disabled; the sweep disables one that had no event', async () => {
    const { root } = await ownedTenant();
    const start = world.clock.now().getTime();
    try {
      const byRoot = await register(root, 'root');
      const expiresAt = new Date(start + HOUR).toISOString();
      const expiring = await child(root, { scopes: ['read', 'manage'], expires_at: expiresAt });
      const byExpiring = await register(expiring.token, 'expiring');
      // listening for machines alone: no event comes for it here
      const quiet = await register((await child(root, { scopes: ['manage'], expires_at: expiresAt })).token, 'quiet', ['instance.running']);
      await deposit(root);
      await deliver();
      expect(byExpiring.heard()).toEqual(['deposit.confirmed']);

      world.clock.set(new Date(start + 2 * HOUR));
      await deposit(root);
      await deliver();
      expect(byRoot.heard()).toEqual(['deposit.confirmed', 'deposit.confirmed']);
      expect(byExpiring.heard()).toEqual(['deposit.confirmed']);
      const expired = new RegExp(`^the credential that registered it ended: token ${expiring.id} expired at ${expiresAt}$`);
      expect(await endpoint(root, byExpiring.id)).toMatchObject(disabledFor(expired));
      const [withheld] = await attempts(root, byExpiring.id);
      expect(withheld).toMatchObject({ type: 'deposit.confirmed', status: 'abandoned', error: expect.stringMatching(/^not sent: the credential that registered it ended/) });

      // no event came for it: the sweep's pass finds it
      expect(await endpoint(root, quiet.id)).toMatchObject({ status: 'active' });
      await sweep();
      expect(await endpoint(root, quiet.id)).toMatchObject(disabledFor(/expired at/));
      expect(await endpoint(root, byRoot.id)).toMatchObject({ status: 'active' });
    } finally {
      world.clock.set(new Date(start));
    }
  });

  it('a registering token past its idle deadline, before any sweep ended it: its delivery is withheld too; the sweep ending it disables one that had no event', async () => {
    const { root } = await ownedTenant();
    const start = world.clock.now().getTime();
    try {
      const idle = await child(root, { scopes: ['read', 'manage'], idle_timeout_minutes: 5 });
      const byIdle = await register(idle.token, 'idle');
      const quietIdle = await child(root, { scopes: ['manage'], idle_timeout_minutes: 5 });
      const quiet = await register(quietIdle.token, 'quiet', ['instance.running']);
      world.clock.set(new Date(start + 10 * 60_000));
      await deposit(root);
      await deliver();
      expect(byIdle.heard()).toEqual([]);
      expect(await endpoint(root, byIdle.id)).toMatchObject(disabledFor(new RegExp(`^the credential that registered it ended: token ${idle.id} timed out idle$`)));
      expect((await endpoint(root, quiet.id)).status).toBe('active');
      await sweep();
      expect(await endpoint(root, quiet.id)).toMatchObject(disabledFor(new RegExp(`^the credential that registered it ended: token ${quietIdle.id} timed out idle$`)));
    } finally {
      world.clock.set(new Date(start));
    }
  });

  it('root takes an endpoint over: it is active again under root, and delivers what comes from then on; nobody else below may', async () => {
    const { root } = await ownedTenant();
    const ops = await child(root, { scopes: ['read', 'manage'] });
    const byOps = await register(ops.token, 'ops');
    const other = await child(root, { scopes: ['read', 'manage'] });
    expect((await call('DELETE', `/v1/tokens/${ops.id}`, root)).status).toBe(204);
    await deposit(root);
    await deliver();
    expect(byOps.heard()).toEqual([]);

    // another ops token did not register it: taking it over is acting on what another saved
    const refused = await call('POST', `/v1/webhook-endpoints/${byOps.id}/enable`, other.token);
    expect(refused.status, JSON.stringify(refused.body)).toBe(403);
    expect(refused.body.detail).toMatch(/^webhook endpoint whe_\w+ was made by another credential of this tenant/);
    const memberEmail = await person('member');
    expect((await signIn(memberEmail, root)).status).toBe(200);
    const memberId = (await people(root)).find((p) => p.email === memberEmail)!.id;
    expect((await call('PATCH', `/v1/identities/${memberId}`, root, { role: 'member' })).status).toBe(200);
    expect((await call('POST', `/v1/webhook-endpoints/${byOps.id}/enable`, (await signIn(memberEmail)).body.token)).status).toBe(403);
    expect((await endpoint(root, byOps.id)).status).toBe('disabled');

    const enabled = await call('POST', `/v1/webhook-endpoints/${byOps.id}/enable`, root);
    expect(enabled.status, JSON.stringify(enabled.body)).toBe(200);
    expect(enabled.body).toMatchObject({ id: byOps.id, status: 'active', disabled_at: null, disabled_reason: null, failing_since: null, made_by_token_id: await selfId(root) });
    await deposit(root);
    await deliver();
    expect(byOps.heard()).toEqual(['deposit.confirmed']);
    // what was told while it was disabled is not sent: it was never scheduled for it
    expect((await attempts(root, byOps.id)).map((a) => a.status)).toEqual(['succeeded']);
  });

  it("left alone: root's endpoint, and a person's while they stay an admin, after their session signs out or runs out", async () => {
    const { root } = await ownedTenant();
    const start = world.clock.now().getTime();
    try {
      const byRoot = await register(root, 'root');
      const signsOut = await adminWithEndpoints(root);
      const runsOut = await adminWithEndpoints(root);
      // sign-out ends the session and what it issued: the token's endpoint ends with it, the person's stays
      expect((await call('DELETE', `/v1/tokens/${await selfId(signsOut.session)}`, signsOut.session)).status).toBe(204);
      expect(await endpoint(root, signsOut.byToken.id)).toMatchObject(disabledFor(/^the credential that registered it ended: console session tok_\w+ was revoked$/));
      // past the 30 days a session lasts, with a sweep between
      world.clock.set(new Date(start + 31 * 24 * HOUR));
      expect((await call('GET', '/v1/tokens/self', runsOut.session)).status).toBe(401);
      await sweep();
      await deposit(root);
      await deliver();
      expect(byRoot.heard()).toEqual(['deposit.confirmed', 'identity.linked', 'identity.linked']);
      expect(signsOut.bySession.heard()).toEqual(['deposit.confirmed', 'identity.linked']);
      expect(runsOut.bySession.heard()).toEqual(['deposit.confirmed']);
      for (const id of [byRoot.id, signsOut.bySession.id, runsOut.bySession.id]) expect(await endpoint(root, id)).toMatchObject({ status: 'active', disabled_at: null });
      // the token under the session that ran out ended with it (expired): its endpoint with it
      expect(await endpoint(root, runsOut.byToken.id)).toMatchObject({ status: 'disabled', disabled_reason: expect.stringMatching(/console session tok_\w+ expired at/) });
    } finally {
      world.clock.set(new Date(start));
    }
  });
});
