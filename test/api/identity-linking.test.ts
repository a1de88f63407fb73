import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pkcePair } from '../contract/identity-contract.ts';
import { startFakeGithub, type FakeGithub } from '../fakes/github/server.ts';
import { OPERATOR_KEY, startApi, type TestApi } from '../support/api.ts';
import { startSmtpInbox, type ReceivedMail, type SmtpInbox } from '../support/smtp-inbox.ts';

/**
 * Who may link a person into a tenant (docs/decisions.md, "Linking people"): a console session, or a root
 * credential (manage, and no cap, no max_rental_hours, no expiry on the token or any ancestor). Any other
 * bearer sent to a linking path (sign-in, new-password, the code exchange, the device poll) gets 403 and
 * nothing happens: no link, no session, the code or the device flow left as it was.
 */
const PASSWORD = 'Correct-Horse-Battery-9';
const HOUR = 3_600_000;
const op = { 'x-service-operator-key': OPERATOR_KEY };

let api: TestApi;
let inbox: SmtpInbox;
let github: FakeGithub;
let seq = 0;
const address = (name = 'person') => `${name}.${Date.now().toString(36)}${seq++}@example.com`;

beforeAll(async () => {
  inbox = await startSmtpInbox();
  let now = () => Date.now();
  github = await startFakeGithub({ clientId: 'Iv1.test0123456789ab', now: () => now() });
  api = await startApi({
    publicUrl: 'http://cp.test',
    auth: { mail: { smtpUrl: inbox.url, from: 'no-reply@cp.test' }, github: { clientId: 'Iv1.test0123456789ab', githubUrl: github.githubUrl, apiUrl: github.apiUrl } },
  });
  now = () => api.clock.now().getTime();
});
afterAll(async () => {
  await api?.close();
  await github?.close();
  await inbox?.close();
});

const post = (path: string, body: unknown, token?: string) => api.call('POST', path, { body, ...(token && { token }) });
const mailTo = (to: string, subject: RegExp) => inbox.next((m: ReceivedMail) => m.to.includes(to) && subject.test(m.subject), 10_000);
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
    expect(refused.body.detail).toMatch(/console session or a root token/);
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

  it('a root credential and a console session link; so does an uncapped child of the root with manage', async () => {
    const owner = await api.newTenant('roots');
    const email = await confirmedAccount(address('by-root'));
    const byRoot = await post('/v1/auth/sign-in', { email, password: PASSWORD }, owner.token);
    expect(byRoot.body).toMatchObject({ status: 'signed_in', tenant_id: owner.tenantId, linked: true });

    const uncappedChild = await child(owner.token, { scopes: ['read', 'manage'] });
    const byChild = await post('/v1/auth/sign-in', { email: await confirmedAccount(address('by-child')), password: PASSWORD }, uncappedChild);
    expect(byChild.body).toMatchObject({ tenant_id: owner.tenantId, linked: true });

    const bySession = await post('/v1/auth/sign-in', { email: await confirmedAccount(address('by-session')), password: PASSWORD }, byRoot.body.token);
    expect(bySession.body).toMatchObject({ tenant_id: owner.tenantId, linked: true });
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
