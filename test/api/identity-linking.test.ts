import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pkcePair } from '../contract/identity-contract.ts';
import { startFakeGithub, type FakeGithub } from '../fakes/github/server.ts';
import { OPERATOR_KEY, startApi, type TestApi } from '../support/api.ts';
import { startSmtpInbox, type ReceivedMail, type SmtpInbox } from '../support/smtp-inbox.ts';

/**
 * Who may link a person into a tenant (docs/decisions.md, "One tree of authority"): only a root credential (an owner's
 * or admin's console session, or a token with every scope and no limit of any kind). Any other bearer sent to a
 * linking path (sign-in, new-password, the code exchange, the device poll) gets 403 and nothing happens: no link, no
 * session, the code or the device flow left as it was.
 */
const PASSWORD = 'Correct-Horse-Battery-9';
const HOUR = 3_600_000;
const op = { 'x-service-operator-key': OPERATOR_KEY };

let api: TestApi;
let inbox: SmtpInbox;
let github: FakeGithub;
/** A webhook receiver on loopback: the events a tenant's endpoint was sent. */
let hooks: Server;
let hooksUrl = '';
const received: { type: string; data: Record<string, unknown> }[] = [];
let seq = 0;
const address = (name = 'person') => `${name}.${Date.now().toString(36)}${seq++}@example.com`;

beforeAll(async () => {
  inbox = await startSmtpInbox();
  let now = () => Date.now();
  github = await startFakeGithub({ clientId: 'Iv1.test0123456789ab', now: () => now() });
  api = await startApi({
    publicUrl: 'http://cp.test',
    auth: { mail: { smtpUrl: inbox.url, from: 'no-reply@cp.test' }, github: { clientId: 'Iv1.test0123456789ab', githubUrl: github.githubUrl, apiUrl: github.apiUrl } },
    webhooks: { allowHttp: true, delivery: false },
    secretsKey: randomBytes(32),
  });
  now = () => api.clock.now().getTime();
  hooks = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      res.writeHead(204).end();
    });
  }).listen(0, '127.0.0.1');
  await new Promise((resolve) => hooks.once('listening', resolve));
  hooksUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hooks`;
});
afterAll(async () => {
  hooks?.closeAllConnections();
  await new Promise((resolve) => hooks?.close(resolve));
  await api?.close();
  await github?.close();
  await inbox?.close();
});

const post = (path: string, body: unknown, token?: string) => api.call('POST', path, { body, ...(token && { token }) });
const handedOut = new Set<ReceivedMail>();
/** The next mail to `to` whose subject matches, that no earlier call handed out. */
async function mailTo(to: string, subject: RegExp): Promise<ReceivedMail> {
  const mail = await inbox.next((m: ReceivedMail) => !handedOut.has(m) && m.to.includes(to) && subject.test(m.subject), 10_000);
  handedOut.add(mail);
  return mail;
}
const codeOf = (mail: ReceivedMail) => /\b(\d{6})\b/.exec(mail.text)![1]!;

async function confirmedAccount(email = address()) {
  expect((await post('/v1/auth/sign-up', { email, password: PASSWORD })).status).toBe(200);
  const code = codeOf(await mailTo(email, /confirmation/));
  expect((await post('/v1/auth/confirm-email', { email, code })).status).toBe(200);
  return email;
}

/** A token issued by `parent` with these terms. */
async function child(parent: string, terms: Record<string, unknown>): Promise<string> {
  const made = await post('/v1/tokens', { name: 'child', ...terms }, parent);
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  return made.body.token as string;
}

/** The tenant's sessions, as its root token lists them. */
const sessionsOf = async (root: string) =>
  ((await api.call('GET', '/v1/tokens', { token: root })).body as { kind: string }[]).filter((t) => t.kind === 'session');

describe('a bearer that is not a root credential links nobody', () => {
  it('the capped agent token of the report: 403 on sign-in, no session, no link; the person signs in to their own tenant', async () => {
    const owner = await api.newTenant('victim-tenant');
    const agent = await child(owner.token, {
      scopes: ['read', 'rent', 'manage'],
      spend_limit_usd: '1.00',
      max_rental_hours: 2,
      expires_at: new Date(api.clock.now().getTime() + HOUR).toISOString(),
    });
    const email = await confirmedAccount(address('agent-owner'));
    const refused = await post('/v1/auth/sign-in', { email, password: PASSWORD }, agent);
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(/root credential/);
    expect(refused.body).not.toHaveProperty('token');
    expect(await sessionsOf(owner.token)).toHaveLength(0);
    // nothing was linked: without a bearer the person lands in a tenant of their own
    const own = await post('/v1/auth/sign-in', { email, password: PASSWORD });
    expect(own.status).toBe(200);
    expect(own.body.tenant_id).not.toBe(owner.tenantId);
    expect(own.body.linked).toBe(false);
  });

  it('each limit alone, on the token or on an ancestor, refuses the link', async () => {
    const owner = await api.newTenant('limits');
    const session = (await post('/v1/auth/sign-in', { email: await confirmedAccount(), password: PASSWORD }, owner.token)).body.token as string;
    const inAnHour = new Date(api.clock.now().getTime() + HOUR).toISOString();
    const cappedParent = await child(owner.token, { scopes: ['read', 'manage'], spend_limit_usd: '50.00' });
    const cases: [string, string][] = [
      ['a spend cap', await child(owner.token, { scopes: ['read', 'manage'], spend_limit_usd: '10.00' })],
      ['max_rental_hours', await child(owner.token, { scopes: ['read', 'manage'], max_rental_hours: 4 })],
      ['an expiry', await child(owner.token, { scopes: ['read', 'manage'], expires_at: inAnHour })],
      // the child names no cap of its own; its parent's still binds it
      ['a capped parent', await child(cappedParent, { scopes: ['read', 'manage'], spend_limit_usd: '50.00' })],
      // a session's child inherits its 30-day expiry: a session cannot hand out the power to link
      ['a session as parent', await child(session, { scopes: ['read', 'manage'] })],
    ];
    for (const [why, token] of cases) {
      const email = await confirmedAccount(address('limited'));
      const answer = await post('/v1/auth/sign-in', { email, password: PASSWORD }, token);
      expect({ why, status: answer.status }).toEqual({ why, status: 403 });
    }
    expect(await sessionsOf(owner.token)).toHaveLength(1);
  });

  it('a root token and an owner\'s session link; an uncapped child with every scope does too, one with fewer scopes never', async () => {
    const owner = await api.newTenant('roots');
    const email = await confirmedAccount(address('by-root'));
    const byRoot = await post('/v1/auth/sign-in', { email, password: PASSWORD }, owner.token);
    expect(byRoot.body).toMatchObject({ status: 'signed_in', tenant_id: owner.tenantId, linked: true });

    const uncappedChild = await child(owner.token, { scopes: ['read', 'rent', 'manage', 'billing'] });
    const byChild = await post('/v1/auth/sign-in', { email: await confirmedAccount(address('by-child')), password: PASSWORD }, uncappedChild);
    expect(byChild.body).toMatchObject({ tenant_id: owner.tenantId, linked: true });
    // a manage-only token would hand out a session with every scope: refused (ROOT_REQUIRED)
    const manageOnly = await child(owner.token, { scopes: ['manage'] });
    const refused = await post('/v1/auth/sign-in', { email: await confirmedAccount(address('by-manage')), password: PASSWORD }, manageOnly);
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(/root credential/);

    const bySession = await post('/v1/auth/sign-in', { email: await confirmedAccount(address('by-session')), password: PASSWORD }, byRoot.body.token);
    expect(bySession.body).toMatchObject({ tenant_id: owner.tenantId, linked: true });
    const roles = Object.fromEntries((await identities(owner.token)).map((p) => [p.email!.split('.')[0], p.role]));
    // the first person is the owner; one linked by a root token an admin; one linked by a session takes its role
    expect(roles).toEqual({ 'by-root': 'owner', 'by-child': 'admin', 'by-session': 'owner' });
  });

  it('new-password: 403, and the new-password session still completes without the bearer', async () => {
    const owner = await api.newTenant('invites');
    const capped = await child(owner.token, { scopes: ['read', 'manage'], spend_limit_usd: '5.00' });
    const email = address('invitee');
    expect((await api.call('POST', '/v1/operator/users', { headers: op, body: { email } })).status).toBe(201);
    const temporary = /^Temporary password: (.+)$/m.exec((await mailTo(email, /invited/)).text)![1]!;
    const step = await post('/v1/auth/sign-in', { email, password: temporary });
    expect(step.body.status).toBe('new_password_required');
    const refused = await post('/v1/auth/new-password', { email, session: step.body.session, new_password: 'Chosen-By-Me-2026' }, capped);
    expect(refused.status).toBe(403);
    const done = await post('/v1/auth/new-password', { email, session: step.body.session, new_password: 'Chosen-By-Me-2026' });
    expect(done.status).toBe(200);
    expect(done.body.tenant_id).not.toBe(owner.tenantId);
  });

  it('the code exchange: 403, and the code is not spent', async () => {
    const owner = await api.newTenant('exchange');
    const capped = await child(owner.token, { scopes: ['read', 'manage'], max_rental_hours: 1 });
    const email = await confirmedAccount(address('exchanger'));
    const redirect = 'http://127.0.0.1:53682/callback';
    const { verifier, challenge } = pkcePair();
    const query = new URLSearchParams({ response_type: 'code', client_id: 'gpu-control-plane', redirect_uri: redirect, state: 's', code_challenge: challenge, code_challenge_method: 'S256' });
    const posted = await fetch(`${api.baseUrl}/auth/authorize?${query}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
      body: new URLSearchParams({ email, password: PASSWORD, ...Object.fromEntries(query) }),
    });
    expect(posted.status).toBe(303);
    const code = new URL(posted.headers.get('location')!).searchParams.get('code')!;
    const exchange = { code, redirect_uri: redirect, code_verifier: verifier };
    expect((await post('/v1/auth/idp/exchange', exchange, capped)).status).toBe(403);
    const own = await post('/v1/auth/idp/exchange', exchange);
    expect(own.status).toBe(200);
    expect(own.body.tenant_id).not.toBe(owner.tenantId);
  });

  it('the device poll: 403 before the code host is asked; the flow completes without the bearer', async () => {
    const owner = await api.newTenant('device');
    const capped = await child(owner.token, { scopes: ['read', 'manage'], expires_at: new Date(api.clock.now().getTime() + HOUR).toISOString() });
    const begun = (await post('/v1/auth/codehost/device/start', undefined)).body as { device_code: string; user_code: string };
    github.state.approve(begun.user_code, { id: 91_001, login: 'linker', email: 'linker@example.com', emailVerified: true });
    api.clock.advance(6_000);
    expect((await post('/v1/auth/codehost/device/poll', { device_code: begun.device_code }, capped)).status).toBe(403);
    const done = await post('/v1/auth/codehost/device/poll', { device_code: begun.device_code });
    expect(done.body).toMatchObject({ status: 'complete', linked: false });
    expect(done.body.tenant_id).not.toBe(owner.tenantId);
  });
});

interface IdentityOut {
  id: string;
  provider: string;
  email: string | null;
  login: string | null;
  linked_at: string;
  linked_by_token_id: string | null;
  role: string;
  spend_limit_cents: number | null;
  max_rental_hours: number | null;
}
const identities = async (token: string) => {
  const listed = await api.call('GET', '/v1/identities', { token });
  expect(listed.status).toBe(200);
  return listed.body as IdentityOut[];
};
const tokenStatus = (token: string) => api.call('GET', '/v1/tokens/self', { token }).then((r) => r.status);
const signIn = (email: string, password = PASSWORD, bearer?: string) => post('/v1/auth/sign-in', { email, password }, bearer);

describe('a tenant\'s people are listed and removable', () => {
  it('the report: a thief links their own address with a stolen session; the owner sees it, removes it, and the thief is out', async () => {
    const victim = await confirmedAccount(address('victim'));
    const own = await signIn(victim);
    const [tenantId, stolen] = [own.body.tenant_id as string, own.body.token as string];
    const selfId = (await api.call('GET', '/v1/tokens/self', { token: stolen })).body.id as string;
    const endpoint = await post('/v1/webhook-endpoints', { url: hooksUrl, events: ['identity.linked', 'identity.unlinked'] }, stolen);
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);

    // the thief links their own address with the stolen session, and mints a token with their session
    const thief = await confirmedAccount(address('thief'));
    api.clock.advance(1_000);
    const linked = await signIn(thief, PASSWORD, stolen);
    expect(linked.body).toMatchObject({ tenant_id: tenantId, linked: true });
    const minted = (await post('/v1/tokens', { name: 'backdoor', scopes: ['read', 'manage'] }, linked.body.token)).body.token as string;

    // the owner is told by mail, naming the thief and how to remove them
    const notice = await mailTo(victim, /added to your gpu-control-plane tenant/);
    expect(notice.text).toContain(thief);
    expect(notice.text).toMatch(/DELETE \/v1\/identities\/idn_/);
    // and by webhook
    await api.plane.services.webhookDeliveries.deliverDue();
    const event = received.find((e) => e.type === 'identity.linked' && e.data.email === thief);
    expect(event?.data).toMatchObject({ provider: 'builtin', email: thief, linked_by_token_id: selfId, identity_id: expect.stringMatching(/^idn_/) });

    // the list: both people, the thief linked by the owner's (stolen) session
    const people = await identities(stolen);
    expect(people.map((p) => p.email)).toEqual([victim, thief]);
    expect(people[0]).toMatchObject({ provider: 'builtin', linked_by_token_id: null, login: null });
    expect(people[1]).toMatchObject({ provider: 'builtin', linked_by_token_id: selfId, linked_at: expect.any(String) });

    // the owner resets the password (the stolen session dies) and signs in again
    expect((await post('/v1/auth/forgot-password', { email: victim })).status).toBe(200);
    const code = codeOf(await mailTo(victim, /reset/));
    expect((await post('/v1/auth/reset-password', { email: victim, code, new_password: 'Owner-Took-It-Back-1' })).status).toBe(200);
    expect(await tokenStatus(stolen)).toBe(401);
    const owner = (await signIn(victim, 'Owner-Took-It-Back-1')).body.token as string;
    // ...and removes the thief: their session and what it minted end at once
    const thiefId = (await identities(owner)).find((p) => p.email === thief)!.id;
    expect((await api.call('DELETE', `/v1/identities/${thiefId}`, { token: owner })).status).toBe(204);
    expect(await tokenStatus(linked.body.token)).toBe(401);
    expect(await tokenStatus(minted)).toBe(401);
    expect((await identities(owner)).map((p) => p.email)).toEqual([victim]);
    await api.plane.services.webhookDeliveries.deliverDue();
    expect(received.find((e) => e.type === 'identity.unlinked' && e.data.identity_id === thiefId)?.data).toMatchObject({ email: thief, tokens_revoked: 3 });

    // the thief's own sign-in no longer lands in the victim's tenant
    const after = await signIn(thief);
    expect(after.status).toBe(200);
    expect(after.body.tenant_id).not.toBe(tenantId);
    expect((await api.call('DELETE', `/v1/identities/${thiefId}`, { token: owner })).status).toBe(404);
  });

  it('another tenant\'s identity is 404; a malformed id is 422; reading takes manage, removing takes root', async () => {
    const a = await api.newTenant('a');
    const b = await api.newTenant('b');
    await signIn(await confirmedAccount(address('in-a')), PASSWORD, a.token);
    const inB = (await signIn(await confirmedAccount(address('in-b')), PASSWORD, b.token)).body;
    const [bPerson] = await identities(b.token);
    expect((await api.call('DELETE', `/v1/identities/${bPerson!.id}`, { token: a.token })).status).toBe(404);
    expect((await api.call('DELETE', '/v1/identities/idn_doesnotexist0', { token: a.token })).status).toBe(404);
    expect((await api.call('DELETE', '/v1/identities/not-an-id', { token: a.token })).status).toBe(422);
    expect(await tokenStatus(inB.token)).toBe(200);

    // every agent token reads: people's addresses are for manage
    const reader = await child(a.token, { scopes: ['read'] });
    expect((await api.call('GET', '/v1/identities', { token: reader })).status).toBe(403);
    const manager = await child(a.token, { scopes: ['read', 'manage'] });
    expect(await identities(manager)).toHaveLength(1);
    const [aPerson] = await identities(a.token);
    const notRoot = await api.call('DELETE', `/v1/identities/${aPerson!.id}`, { token: manager });
    expect(notRoot.status).toBe(403);
    expect(notRoot.body.detail).toMatch(/root credential/);
    expect((await api.call('GET', '/v1/identities')).status).toBe(401);
  });

  it('the last owner cannot be removed (409); another owner can remove them; admins and root tokens never remove owners', async () => {
    const first = await confirmedAccount(address('founder'));
    const founder = (await signIn(first)).body;
    const [only] = await identities(founder.token);
    expect(only!.role).toBe('owner');
    const refused = await api.call('DELETE', `/v1/identities/${only!.id}`, { token: founder.token });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/last owner/);
    expect(await tokenStatus(founder.token)).toBe(200);

    // a second way in for the same person (linked with their session) is an owner too: either may go, then the
    // other is the last owner again
    const second = await confirmedAccount(address('partner'));
    const partner = (await signIn(second, PASSWORD, founder.token)).body;
    const partnerId = (await identities(founder.token)).find((p) => p.email === second)!.id;
    expect((await api.call('DELETE', `/v1/identities/${only!.id}`, { token: partner.token })).status).toBe(204);
    expect(await tokenStatus(founder.token)).toBe(401);
    expect((await api.call('DELETE', `/v1/identities/${partnerId}`, { token: partner.token })).status).toBe(409);

    // a root token stands as an admin: it removes admins, never an owner
    const rooted = await api.newTenant('rooted');
    const bossEmail = await confirmedAccount(address('boss'));
    await signIn(bossEmail, PASSWORD, rooted.token);
    await signIn(await confirmedAccount(address('helper')), PASSWORD, rooted.token);
    // linked in the same instant of the test's clock: told apart by address, not by order
    const listed = await identities(rooted.token);
    const [boss, helper] = [listed.find((p) => p.email === bossEmail), listed.find((p) => p.email !== bossEmail)];
    expect([boss!.role, helper!.role]).toEqual(['owner', 'admin']);
    const ownerRefused = await api.call('DELETE', `/v1/identities/${boss!.id}`, { token: rooted.token });
    expect(ownerRefused.status).toBe(403);
    expect(ownerRefused.body.detail).toMatch(/owner's console session/);
    expect((await api.call('DELETE', `/v1/identities/${helper!.id}`, { token: rooted.token })).status).toBe(204);
    expect((await identities(rooted.token)).map((p) => p.id)).toEqual([boss!.id]);
  });

  it('two removals at once cannot take a tenant\'s last two people', async () => {
    const first = await confirmedAccount(address('pair-a'));
    const a = (await signIn(first)).body;
    const second = await confirmedAccount(address('pair-b'));
    const b = (await signIn(second, PASSWORD, a.token)).body;
    const people = await identities(a.token);
    const answers = await Promise.all([
      api.call('DELETE', `/v1/identities/${people[0]!.id}`, { token: b.token }),
      api.call('DELETE', `/v1/identities/${people[1]!.id}`, { token: a.token }),
    ]);
    // the second to run finds its own caller removed by the first: it acts as what it is now, nobody (401), before
    // the last owner's rule (409) is even asked
    expect(answers.map((r) => r.status).sort()).toEqual([204, 401]);
    const left = answers[0]!.status === 204 ? b.token : a.token;
    expect(await identities(left)).toHaveLength(1);
  });

  it('a GitHub person is listed by login; an invited person with null linked_by; other people are mailed', async () => {
    const owner = await api.newTenant('mixed');
    const ownerEmail = await confirmedAccount(address('mixed-owner'));
    const session = (await signIn(ownerEmail, PASSWORD, owner.token)).body.token as string;
    const begun = (await post('/v1/auth/codehost/device/start', undefined)).body as { device_code: string; user_code: string };
    github.state.approve(begun.user_code, { id: 92_002, login: 'octo-person', email: null, emailVerified: false });
    api.clock.advance(6_000);
    expect((await post('/v1/auth/codehost/device/poll', { device_code: begun.device_code }, session)).body).toMatchObject({ status: 'complete', linked: true });
    expect((await mailTo(ownerEmail, /added to your gpu-control-plane tenant/)).text).toContain('octo-person (github)');

    api.clock.advance(1_000);
    const invitee = address('invited');
    expect((await api.call('POST', '/v1/operator/users', { headers: op, body: { email: invitee, tenant_id: owner.tenantId } })).status).toBe(201);
    expect((await mailTo(ownerEmail, /added to your gpu-control-plane tenant/)).text).toMatch(/by an operator's invitation/);

    const people = await identities(owner.token);
    expect(people.map((p) => ({ provider: p.provider, email: p.email, login: p.login }))).toEqual([
      { provider: 'builtin', email: ownerEmail, login: null },
      { provider: 'github', email: null, login: 'octo-person' },
      { provider: 'builtin', email: invitee, login: null },
    ]);
    expect(people[2]!.linked_by_token_id).toBeNull();
  });
});
