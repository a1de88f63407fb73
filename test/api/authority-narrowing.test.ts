import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR, rentalWorld, type RentalWorld } from '../support/rentals.ts';
import { PASSWORD, peopleOver } from '../support/people.ts';
import { startSmtpInbox, type SmtpInbox } from '../support/smtp-inbox.ts';

/**
 * Authority only narrows (docs/decisions.md, "One tree of authority"), the second attack on people's authority replayed
 * over HTTP: changing a person changes nobody else's role upwards, an invitation is worth what its inviter still is when
 * it is accepted, a person demoted out of rent rents nothing more through what they booked before, and only an owner's
 * authority ends an owner's credentials.
 */
const HOUR = 3_600_000;
const MINUTE = 60_000;

let world: RentalWorld;
let inbox: SmtpInbox;
let helpers: ReturnType<typeof peopleOver>;

beforeAll(async () => {
  inbox = await startSmtpInbox();
  world = await rentalWorld({ auth: { mail: { smtpUrl: inbox.url, from: 'no-reply@cp.test' } } }, { sandbox: { spotPreemptionsPerHour: 0 } });
  helpers = peopleOver(inbox, call);
});
afterAll(async () => {
  await world?.close();
  await inbox?.close();
});

const call = (method: string, path: string, token?: string, body?: unknown) => world.api.call(method, path, { ...(token && { token }), ...(body !== undefined && { body }) });
const person = (name: string) => helpers.person(name);
const signIn = (email: string, tenantId?: string) => helpers.signIn(email, tenantId);
const mailTo = (to: string, subject: RegExp) => helpers.mailTo(to, subject);
const people = async (token: string) => (await call('GET', '/v1/identities', token)).body as { id: string; email: string; role: string }[];
const roles = async (token: string) => Object.fromEntries((await people(token)).map((p) => [p.email, p.role]));
const self = async (token: string) => (await call('GET', '/v1/tokens/self', token)).body;
const sweep = async () => expect((await world.api.call('POST', '/v1/operator/sweep', { headers: OPERATOR })).status).toBe(200);

/** A funded tenant whose owner is a person signed in. */
async function ownedTenant(usd = 100) {
  const tenant = await world.fundedTenant(usd);
  const ownerEmail = await person('owner');
  const signed = await call('POST', '/v1/auth/sign-in', tenant.token, { email: ownerEmail, password: PASSWORD });
  expect(signed.status).toBe(200);
  return { root: tenant.token, owner: signed.body.token as string, ownerEmail, tenantId: tenant.tenantId };
}

/** `inviter` invites a new account with `role`: answers its address and the code, not accepted yet. */
async function invite(inviter: string, role: string, limits: Record<string, unknown> = {}): Promise<{ email: string; code: string }> {
  const email = await person(role);
  const made = await call('POST', '/v1/invitations', inviter, { email, role, ...limits });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  return { email, code: /Invitation code: (\S+)/.exec((await mailTo(email, /invited/)).text)![1]! };
}
/** The invitee accepts with their own session; answers the accept and, when it joined, their session in the tenant. */
async function accept(invited: { email: string; code: string }, tenantId: string): Promise<{ status: number; session: string | null }> {
  const own = (await signIn(invited.email)).body.token as string;
  const accepted = await call('POST', '/v1/invitations/accept', own, { code: invited.code });
  return { status: accepted.status, session: accepted.status === 200 ? ((await signIn(invited.email, tenantId)).body.token as string) : null };
}
async function joined(inviter: string, role: string, tenantId: string, limits: Record<string, unknown> = {}) {
  const invited = await invite(inviter, role, limits);
  const { status, session } = await accept(invited, tenantId);
  expect(status).toBe(200);
  return { email: invited.email, session: session! };
}
const idOf = async (token: string, email: string) => (await people(token)).find((p) => p.email === email)!.id;

describe('changing a person never widens the people under them', () => {
  it('demoting an admin leaves the viewer they invited a viewer; making them an owner makes nobody they invited an owner', async () => {
    const { owner, ownerEmail, tenantId } = await ownedTenant();
    const admin = await joined(owner, 'admin', tenantId);
    const viewer = await joined(admin.session, 'viewer', tenantId);
    const member = await joined(admin.session, 'member', tenantId, { spend_limit_usd: '5.00' });
    const adminId = await idOf(owner, admin.email);

    expect((await call('PATCH', `/v1/identities/${adminId}`, owner, { role: 'member' })).status).toBe(200);
    // the viewer they invited stays a viewer (it was made a member: rent and manage it never had)
    expect((await roles(owner))[viewer.email]).toBe('viewer');
    expect((await self(viewer.session)).scopes).toEqual(['read']);
    expect((await world.rent(viewer.session, { node_id: (await world.offers())[0]!.id, termination_hours: 1 })).status).toBe(403);

    expect((await call('PATCH', `/v1/identities/${adminId}`, owner, { role: 'owner' })).status).toBe(200);
    const after = await roles(owner);
    expect(after).toMatchObject({ [admin.email]: 'owner', [member.email]: 'member', [viewer.email]: 'viewer', [ownerEmail]: 'owner' });
    // so the member invited under them is not root, and cannot remove the tenant's first owner
    expect(await self(member.session)).toMatchObject({ role: 'member', root: false, remaining_cents: 500 });
    expect((await call('DELETE', `/v1/identities/${await idOf(owner, ownerEmail)}`, member.session)).status).toBe(403);
    expect((await self(admin.session)).root).toBe(true);
  });

  it("narrowing still reaches everyone under them: an admin's invitee becomes a member with them, a billing one a viewer", async () => {
    const { owner, tenantId } = await ownedTenant();
    const admin = await joined(owner, 'admin', tenantId);
    const invitedAdmin = await joined(admin.session, 'admin', tenantId);
    const invitedBilling = await joined(admin.session, 'billing', tenantId);
    expect((await call('PATCH', `/v1/identities/${await idOf(owner, admin.email)}`, owner, { role: 'member', spend_limit_usd: '3.00' })).status).toBe(200);
    expect(await self(invitedAdmin.session)).toMatchObject({ role: 'member', scopes: ['read', 'rent', 'manage'], root: false, remaining_cents: 300 });
    // billing and member share only read
    expect(await self(invitedBilling.session)).toMatchObject({ role: 'viewer', scopes: ['read'] });
    // raising the admin again raises only them: the people under them stay as narrowed
    expect((await call('PATCH', `/v1/identities/${await idOf(owner, admin.email)}`, owner, { role: 'admin' })).status).toBe(200);
    expect((await roles(owner))[invitedAdmin.email]).toBe('member');
  });
});

describe('an invitation is worth what its inviter still is when it is accepted', () => {
  it("an owner's invitation of an owner is void once they are demoted or removed; an admin's once they are a member", async () => {
    const { owner, tenantId } = await ownedTenant();
    const demoted = await joined(owner, 'owner', tenantId);
    const removed = await joined(owner, 'owner', tenantId);
    const narrowed = await joined(owner, 'admin', tenantId);
    const byDemoted = await invite(demoted.session, 'owner');
    const byRemoved = await invite(removed.session, 'owner');
    const byNarrowed = await invite(narrowed.session, 'viewer');
    expect((await call('PATCH', `/v1/identities/${await idOf(owner, demoted.email)}`, owner, { role: 'admin' })).status).toBe(200);
    expect((await call('DELETE', `/v1/identities/${await idOf(owner, removed.email)}`, owner)).status).toBe(204);
    expect((await call('PATCH', `/v1/identities/${await idOf(owner, narrowed.email)}`, owner, { role: 'member' })).status).toBe(200);
    for (const invited of [byDemoted, byRemoved, byNarrowed]) {
      expect((await accept(invited, tenantId)).status, invited.email).toBe(404);
      expect((await roles(owner))[invited.email], invited.email).toBeUndefined();
    }
    // the authority still standing: an owner's invitation of an owner, after the session that made it signed out (a
    // session acts for its person, who is still an owner)
    const standing = await invite(owner, 'owner');
    expect((await call('DELETE', `/v1/tokens/${(await self(owner)).id}`, owner)).status).toBe(204);
    expect((await accept(standing, tenantId)).status).toBe(200);
  });
});

describe('a person demoted out of rent rents nothing more through what they booked before', () => {
  it('their scheduled reservations are cancelled and pending spot claims released at once, and neither starts later', async () => {
    const { owner, root, tenantId } = await ownedTenant();
    const member = await joined(owner, 'member', tenantId, { spend_limit_usd: '50.00', max_rental_hours: 10 });
    const agent = (await call('POST', '/v1/tokens', member.session, { scopes: ['read', 'rent'] })).body.token as string;
    const [a, b] = await world.offers((o) => o.rate <= 300);
    const booked: { reservation: string; claim: string }[] = [];
    for (const token of [member.session, agent]) {
      const reservation = await call('POST', '/v1/reservations', token, { node_id: a!.id, starts_at: new Date(world.clock.now().getTime() + 2 * HOUR).toISOString(), hours: 1, name: 'later' });
      expect(reservation.status, JSON.stringify(reservation.body)).toBe(201);
      // a bid no spot price meets: the claim waits, pending
      const claim = await call('POST', '/v1/spot-claims', token, { node_id: b!.id, gpu_count: b!.gpuCount, max_price_per_gpu_hour: '0.01', hours: 1, name: 'spot' });
      expect(claim.status, JSON.stringify(claim.body)).toBe(201);
      booked.push({ reservation: reservation.body.id, claim: claim.body.id });
    }
    const balance = (await world.balance(root)).balance_cents;
    expect((await call('PATCH', `/v1/identities/${await idOf(owner, member.email)}`, owner, { role: 'viewer' })).status).toBe(200);
    for (const { reservation, claim } of booked) {
      expect((await call('GET', `/v1/reservations/${reservation}`, root)).body.status).toBe('cancelled');
      expect((await call('GET', `/v1/spot-claims/${claim}`, root)).body.status).toBe('released');
    }
    // their commitments went back with them
    expect((await self(agent)).committed_cents).toBe(0);
    world.clock.advance(2 * HOUR + MINUTE);
    await sweep();
    for (const { reservation } of booked) expect((await call('GET', `/v1/reservations/${reservation}`, root)).body).toMatchObject({ status: 'cancelled', instance_id: null });
    expect((await world.balance(root)).balance_cents).toBe(balance);
  });

  it('a spot claim running a machine is not rented again after a preemption: it is released', async () => {
    const { owner, root, tenantId } = await ownedTenant();
    const member = await joined(owner, 'member', tenantId, { spend_limit_usd: '50.00', max_rental_hours: 10 });
    const [offer] = await world.offers((o) => o.rate >= 40 && o.rate <= 400);
    const spotRate = Math.floor(offer!.rate / 2);
    await world.sandbox.cloud.setSpotPrice(offer!.id.slice('sandbox:'.length), (spotRate / 100).toFixed(2));
    world.clock.advance(MINUTE);
    const bid = (Math.ceil(spotRate / offer!.gpuCount) + 2) / 100;
    const made = await call('POST', '/v1/spot-claims', member.session, { node_id: offer!.id, gpu_count: offer!.gpuCount, max_price_per_gpu_hour: bid.toFixed(2), hours: 3, name: 'spot' });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    await sweep();
    const active = (await call('GET', `/v1/spot-claims/${made.body.id}`, root)).body;
    expect(active).toMatchObject({ status: 'active', instance_id: expect.stringMatching(/^ins_/) });
    world.clock.advance(20 * MINUTE);
    await sweep();
    expect((await call('PATCH', `/v1/identities/${await idOf(owner, member.email)}`, owner, { role: 'viewer' })).status).toBe(200);
    // its machine runs on: it is the tenant's (ending a credential's authority stops no work), until it is taken back
    const machine = (await world.sandbox.cloud.listMachines()).find((m) => m.label === active.instance_id)!;
    expect(await world.sandbox.cloud.preemptMachine(machine.machineId)).toBe(true);
    world.clock.advance(2 * MINUTE);
    await sweep();
    await sweep();
    const after = (await call('GET', `/v1/spot-claims/${made.body.id}`, root)).body;
    expect(after).toMatchObject({ status: 'released', preemptions: 1, instance_id: null });
    // no second machine was rented for it
    const instances = (await call('GET', '/v1/instances', root)).body as { id: string }[];
    expect(instances.map((i) => i.id)).toEqual([active.instance_id]);
  });
});

describe("only an owner's authority ends an owner's credentials", () => {
  const revoke = (id: string, bearer: string) => call('DELETE', `/v1/tokens/${id}`, bearer);
  const issue = async (bearer: string, body: Record<string, unknown> = { scopes: ['read', 'rent', 'manage', 'billing'] }) => {
    const made = await call('POST', '/v1/tokens', bearer, body);
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    return { id: made.body.id as string, token: made.body.token as string };
  };

  it("an admin's session gets 403 on an owner's other session, API tokens and the tokens under them; over MCP too", async () => {
    const { owner, ownerEmail, tenantId } = await ownedTenant();
    const admin = await joined(owner, 'admin', tenantId);
    const ownersOther = (await signIn(ownerEmail, tenantId)).body.token as string;
    const ownersToken = await issue(owner);
    const ownersAgent = await issue(ownersToken.token, { scopes: ['read'] });
    for (const id of [(await self(ownersOther)).id as string, ownersToken.id, ownersAgent.id]) {
      const refused = await revoke(id, admin.session);
      expect(refused.status, id).toBe(403);
      expect(refused.body.detail).toMatch(/is an owner's credential and needs an owner/);
    }
    // a token the admin issued carries the session's expiry, so it is not root and reaches only its own subtree
    const adminsToken = await issue(admin.session);
    expect((await revoke(ownersToken.id, adminsToken.token)).status).toBe(404);
    const client = new Client({ name: 'owner-credentials-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${world.api.baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${admin.session}` } } }));
    try {
      const result = (await client.callTool({ name: 'revoke_token', arguments: { token_id: ownersToken.id } })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.content)).toMatch(/needs an owner/);
    } finally {
      await client.close();
    }
    // nothing of the owner's ended
    for (const token of [ownersOther, ownersToken.token, ownersAgent.token]) expect((await call('GET', '/v1/tokens/self', token)).status).toBe(200);
  });

  it("an owner ends an admin's credentials; an admin its own and a member's; the bootstrap secret's root token an owner's", async () => {
    const { root, owner, tenantId } = await ownedTenant();
    const admin = await joined(owner, 'admin', tenantId);
    const member = await joined(admin.session, 'member', tenantId, { spend_limit_usd: '5.00' });
    const adminsToken = await issue(admin.session);
    const adminsOther = await issue(admin.session, { scopes: ['read'] });
    const membersToken = await issue(member.session, { scopes: ['read'] });
    expect((await revoke(adminsOther.id, admin.session)).status).toBe(204);
    expect((await revoke(membersToken.id, admin.session)).status).toBe(204);
    expect((await revoke((await self(member.session)).id as string, admin.session)).status).toBe(204);
    expect((await call('GET', '/v1/tokens/self', member.session)).status).toBe(401);
    expect((await revoke(adminsToken.id, owner)).status).toBe(204);
    expect((await revoke((await self(admin.session)).id as string, owner)).status).toBe(204);
    expect((await call('GET', '/v1/tokens/self', admin.session)).status).toBe(401);
    // a root token with no person above it is the tenant's own root
    const ownersToken = await issue(owner, { scopes: ['read'] });
    expect((await revoke(ownersToken.id, root)).status).toBe(204);
  });
});
