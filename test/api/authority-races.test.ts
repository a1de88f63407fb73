import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiResponse } from '../support/api.ts';
import { PASSWORD, peopleOver } from '../support/people.ts';
import { rentalWorld, type RentalWorld } from '../support/rentals.ts';
import { startSmtpInbox, type SmtpInbox } from '../support/smtp-inbox.ts';

/**
 * Nothing is added under a node while it is ended or narrowed (docs/decisions.md, "One tree of authority"): requests
 * that add a node (a token issued, a person linked, an invitation accepted, a session from a switch) sent side by side
 * with the removal or demotion of the node they hang from. Whatever order the database runs them in, none of what they
 * made outlives the removal or keeps what the demotion took.
 */
let world: RentalWorld;
let inbox: SmtpInbox;
let helpers: ReturnType<typeof peopleOver>;

beforeAll(async () => {
  inbox = await startSmtpInbox();
  world = await rentalWorld({ auth: { mail: { smtpUrl: inbox.url, from: 'no-reply@cp.test' } } });
  helpers = peopleOver(inbox, call);
});
afterAll(async () => {
  await world?.close();
  await inbox?.close();
});

const call = (method: string, path: string, token?: string, body?: unknown) => world.api.call(method, path, { ...(token && { token }), ...(body !== undefined && { body }) });
const self = (token: string) => call('GET', '/v1/tokens/self', token);
const idOf = async (token: string, email: string) => ((await call('GET', '/v1/identities', token)).body as { id: string; email: string }[]).find((p) => p.email === email)!.id;

/** A tenant whose owner is a person signed in. */
async function ownedTenant() {
  const tenant = await world.fundedTenant(100);
  const ownerEmail = await helpers.person('owner');
  const signed = await call('POST', '/v1/auth/sign-in', tenant.token, { email: ownerEmail, password: PASSWORD });
  expect(signed.status).toBe(200);
  return { owner: signed.body.token as string, tenantId: tenant.tenantId };
}
/** `inviter` invites a new account with `role`; answers its address, the code, and the invitee's own session. */
async function invited(inviter: string, role: string, limits: Record<string, unknown> = {}) {
  const email = await helpers.person(role);
  expect((await call('POST', '/v1/invitations', inviter, { email, role, ...limits })).status).toBe(201);
  const code = /Invitation code: (\S+)/.exec((await helpers.mailTo(email, /invited/)).text)![1]!;
  return { email, code, own: (await helpers.signIn(email)).body.token as string };
}
async function joined(inviter: string, role: string, tenantId: string, limits: Record<string, unknown> = {}) {
  const person = await invited(inviter, role, limits);
  expect((await call('POST', '/v1/invitations/accept', person.own, { code: person.code })).status).toBe(200);
  return { email: person.email, session: (await helpers.signIn(person.email, tenantId)).body.token as string };
}
/** `adds` and `change` sent side by side, the change among the first few: answers the answers of `adds`. */
async function raced(adds: (() => Promise<ApiResponse>)[], change: () => Promise<ApiResponse>): Promise<ApiResponse[]> {
  const sent = adds.map((add) => add());
  const changed = change();
  const answers = await Promise.all(sent);
  expect((await changed).status).toBeLessThan(300);
  return answers;
}
/** How many of the sessions or tokens in `answers` still authenticate. */
async function stillLive(answers: ApiResponse[]): Promise<number> {
  let live = 0;
  for (const answer of answers) if (answer.status < 300 && answer.body?.token && (await self(answer.body.token)).status === 200) live++;
  return live;
}

describe('adding under a node while it is removed or demoted', () => {
  it("people linked with an admin's session while the admin is removed are all out", async () => {
    const { owner, tenantId } = await ownedTenant();
    const admin = await joined(owner, 'admin', tenantId);
    const emails = await Promise.all(Array.from({ length: 8 }, () => helpers.person('linked')));
    const answers = await raced(
      emails.map((email) => () => call('POST', '/v1/auth/sign-in', admin.session, { email, password: PASSWORD })),
      async () => call('DELETE', `/v1/identities/${await idOf(owner, admin.email)}`, owner),
    );
    expect(await stillLive(answers)).toBe(0);
    expect(((await call('GET', '/v1/identities', owner)).body as unknown[]).length).toBe(1);
  });

  it("invitations accepted while the inviter is removed bring nobody in", async () => {
    const { owner, tenantId } = await ownedTenant();
    const admin = await joined(owner, 'admin', tenantId);
    const invitees = await Promise.all(Array.from({ length: 6 }, () => invited(admin.session, 'admin')));
    const adminId = await idOf(owner, admin.email);
    await raced(
      invitees.map((invitee) => () => call('POST', '/v1/invitations/accept', invitee.own, { code: invitee.code })),
      () => call('DELETE', `/v1/identities/${adminId}`, owner),
    );
    expect(await stillLive(await Promise.all(invitees.map((invitee) => helpers.signIn(invitee.email, tenantId))))).toBe(0);
    expect(((await call('GET', '/v1/identities', owner)).body as unknown[]).length).toBe(1);
  });

  it('tokens a member issues while demoted to viewer hold no rent', async () => {
    const { owner, tenantId } = await ownedTenant();
    const member = await joined(owner, 'member', tenantId, { spend_limit_usd: '20.00' });
    const memberId = await idOf(owner, member.email);
    const answers = await raced(
      Array.from({ length: 16 }, () => () => call('POST', '/v1/tokens', member.session, { scopes: ['read', 'rent'] })),
      () => call('PATCH', `/v1/identities/${memberId}`, owner, { role: 'viewer' }),
    );
    const issued = answers.filter((a) => a.status === 201);
    for (const answer of issued) expect((await self(answer.body.token)).body.scopes).toEqual(['read']);
  });

  it('sessions a person switches to while removed from that tenant are all dead', async () => {
    const first = await ownedTenant();
    const second = await ownedTenant();
    const member = await joined(first.owner, 'member', first.tenantId, { spend_limit_usd: '5.00' });
    const code = (await call('POST', '/v1/invitations', second.owner, { email: member.email, role: 'admin' })).status;
    expect(code).toBe(201);
    const mailed = /Invitation code: (\S+)/.exec((await helpers.mailTo(member.email, /invited/)).text)![1]!;
    expect((await call('POST', '/v1/invitations/accept', member.session, { code: mailed })).status).toBe(200);
    const there = await idOf(second.owner, member.email);
    const answers = await raced(
      Array.from({ length: 16 }, () => () => call('POST', '/v1/auth/switch', member.session, { tenant_id: second.tenantId })),
      () => call('DELETE', `/v1/identities/${there}`, second.owner),
    );
    expect(await stillLive(answers)).toBe(0);
  });
});
