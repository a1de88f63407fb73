import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pkcePair } from '../contract/identity-contract.ts';
import { startFakeGithub, type FakeGithub } from '../fakes/github/server.ts';
import { OPERATOR_KEY, startApi, type TestApi } from '../support/api.ts';
import { startSmtpInbox, type ReceivedMail, type SmtpInbox } from '../support/smtp-inbox.ts';

/**
 * Sign-in over HTTP on the embedded default (the built-in provider, mail through a real local SMTP server)
 * and GitHub's device flow on its fake: every sign-in route beyond tokens,
 * link-or-provision, console sessions, throttling and the operator's invitation.
 */
const PASSWORD = 'Correct-Horse-Battery-9';
const DAY = 86_400_000;
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
    auth: { mail: { smtpUrl: inbox.url, from: 'gpu-control-plane <no-reply@cp.test>' }, github: { clientId: 'Iv1.test0123456789ab', githubUrl: github.githubUrl, apiUrl: github.apiUrl } },
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

/** Sign-up, the emailed code, confirmation: an account that can sign in. */
async function confirmedAccount(email = address()) {
  expect((await post('/v1/auth/sign-up', { email, password: PASSWORD })).status).toBe(200);
  const code = codeOf(await mailTo(email, /confirmation/));
  expect((await post('/v1/auth/confirm-email', { email, code })).body).toEqual({ status: 'confirmed' });
  return email;
}

describe('email accounts', () => {
  it('sign up, confirm by the emailed code, sign in: a 30-day console session of a fresh tenant', async () => {
    const email = address('new');
    const sent = await post('/v1/auth/sign-up', { email, password: PASSWORD });
    expect(sent.status).toBe(200);
    expect(sent.body).toEqual({ status: 'code_sent', destination: expect.stringMatching(/^n\*+@e\*+\.com$/) });
    const mail = await mailTo(email, /confirmation/);
    expect(mail.from).toContain('no-reply@cp.test');

    // before the address is confirmed: 409 saying how
    const early = await post('/v1/auth/sign-in', { email, password: PASSWORD });
    expect(early.status).toBe(409);
    expect(early.body.detail).toMatch(/confirm-email/);

    expect((await post('/v1/auth/confirm-email', { email, code: codeOf(mail) })).body).toEqual({ status: 'confirmed' });
    const signedIn = await post('/v1/auth/sign-in', { email, password: PASSWORD });
    expect(signedIn.status).toBe(200);
    expect(signedIn.body).toMatchObject({ status: 'signed_in', token: expect.stringMatching(/^gcp_tok_/), tenant_id: expect.stringMatching(/^ten_/), linked: false });
    expect(Date.parse(signedIn.body.expires_at) - api.clock.now().getTime()).toBe(30 * DAY);

    // the session: every scope, listed as kind session, administers the tenant, issues capped agent tokens
    const session = signedIn.body.token as string;
    const self = (await api.call('GET', '/v1/tokens/self', { token: session })).body;
    expect(self).toMatchObject({ kind: 'session', scopes: ['read', 'rent', 'manage', 'billing'], tenant_id: signedIn.body.tenant_id, spend_limit_cents: null });
    const agent = await post('/v1/tokens', { name: 'agent', scopes: ['read', 'rent'], spend_limit_usd: '5.00', max_rental_hours: 2 }, session);
    expect(agent.status).toBe(201);
    expect(agent.body.kind).toBe('api');
    const listed = (await api.call('GET', '/v1/tokens', { token: session })).body as { id: string; kind: string }[];
    expect(listed.map((t) => t.kind).sort()).toEqual(['api', 'session']);

    // signing in again reaches the same tenant; signing out is revoking the session
    const again = await post('/v1/auth/sign-in', { email: email.toUpperCase(), password: PASSWORD });
    expect(again.body.tenant_id).toBe(signedIn.body.tenant_id);
    expect((await api.call('DELETE', `/v1/tokens/${self.id}`, { token: session })).status).toBe(204);
    expect((await api.call('GET', '/v1/tokens/self', { token: session })).status).toBe(401);
  });

  it('a wrong email or password is one 401, whatever was wrong', async () => {
    const email = await confirmedAccount();
    const wrongPassword = await post('/v1/auth/sign-in', { email, password: 'Not-The-Password-1' });
    const unknown = await post('/v1/auth/sign-in', { email: address('nobody'), password: PASSWORD });
    expect(wrongPassword.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(unknown.body).toEqual(wrongPassword.body);
  });

  it('after 10 failed sign-ins in 15 minutes the email gets 429 with Retry-After, even with the right password', async () => {
    const email = await confirmedAccount();
    for (let i = 0; i < 10; i++) expect((await post('/v1/auth/sign-in', { email, password: `Wrong-Password-${i}` })).status).toBe(401);
    const limited = await post('/v1/auth/sign-in', { email, password: PASSWORD });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(900);
    // another email is not held back; the window ends and the right password works again
    expect((await post('/v1/auth/sign-in', { email: await confirmedAccount(), password: PASSWORD })).status).toBe(200);
    api.clock.advance(15 * 60_000 + 1_000);
    expect((await post('/v1/auth/sign-in', { email, password: PASSWORD })).status).toBe(200);
  });

  it('forgot, resend and sign-up answer alike for known and unknown addresses; a reset code sets the password once', async () => {
    const known = await confirmedAccount();
    const unknown = address('ghost');
    for (const path of ['/v1/auth/forgot-password', '/v1/auth/resend-code']) {
      const a = await post(path, { email: known });
      const b = await post(path, { email: unknown });
      expect({ status: a.status, keys: Object.keys(a.body) }).toEqual({ status: b.status, keys: Object.keys(b.body) });
      expect(a.body.status).toBe('code_sent');
    }
    const signUpAgain = await post('/v1/auth/sign-up', { email: known, password: PASSWORD });
    expect(signUpAgain.body).toMatchObject({ status: 'code_sent' });

    const code = codeOf(await mailTo(known, /reset/));
    const newPassword = 'Another-Long-Passphrase-7';
    expect((await post('/v1/auth/reset-password', { email: known, code, new_password: newPassword })).body).toEqual({ status: 'password_reset' });
    expect((await post('/v1/auth/reset-password', { email: known, code, new_password: 'Yet-Another-One-8' })).status).toBe(422);
    expect((await post('/v1/auth/sign-in', { email: known, password: PASSWORD })).status).toBe(401);
    expect((await post('/v1/auth/sign-in', { email: known, password: newPassword })).status).toBe(200);
  });

  it('wrong codes are limited per email: after 5 in 15 minutes (a code\'s life and its tries), 429 with Retry-After', async () => {
    const email = address('guesser');
    await post('/v1/auth/sign-up', { email, password: PASSWORD });
    const real = codeOf(await mailTo(email, /confirmation/));
    const wrong = real === '000000' ? '000001' : '000000';
    for (let i = 0; i < 5; i++) expect((await post('/v1/auth/confirm-email', { email, code: wrong })).status).toBe(422);
    const limited = await post('/v1/auth/confirm-email', { email, code: real });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await post('/v1/auth/reset-password', { email, code: wrong, new_password: 'Whatever-Long-1' })).status).toBe(429);
  });

  it('refuses weak passwords and malformed input with 422 naming the field', async () => {
    const email = address('weak');
    for (const [body, field] of [
      [{ email, password: 'short' }, 'password'],
      [{ email, password: email }, 'password'],
      [{ email: 'not-an-email', password: PASSWORD }, 'email'],
    ] as const) {
      const res = await post('/v1/auth/sign-up', body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.errors[0].loc).toEqual(['body', field]);
    }
    expect((await post('/v1/auth/confirm-email', { email, code: '12' })).status).toBe(422);
  });

  it('forgot-password takes as long for known addresses as for unknown ones (medians within 20%)', async () => {
    const known = await Promise.all(Array.from({ length: 20 }, () => confirmedAccount()));
    const time = async (email: string) => {
      const start = performance.now();
      expect((await post('/v1/auth/forgot-password', { email })).status).toBe(200);
      return performance.now() - start;
    };
    const knownTimes: number[] = [];
    const unknownTimes: number[] = [];
    for (let i = 0; i < 200; i++) {
      // each address within its mail allowance (5 asks an hour), so every ask reaches the provider
      api.clock.advance(15 * 60_000);
      knownTimes.push(await time(known[i % known.length]!));
      unknownTimes.push(await time(address('unknown')));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
    const [k, u] = [median(knownTimes), median(unknownTimes)];
    console.info(`forgot-password medians: known ${k.toFixed(2)} ms, unknown ${u.toFixed(2)} ms (200 each)`);
    expect(Math.abs(k - u) / Math.max(k, u)).toBeLessThan(0.2);
  }, 120_000);
});

describe('a password reset', () => {
  const status = (token: string) => api.call('GET', '/v1/tokens/self', { token }).then((r) => r.status);
  const resetTo = async (email: string, newPassword: string) => {
    expect((await post('/v1/auth/forgot-password', { email })).status).toBe(200);
    const code = codeOf(await mailTo(email, /reset/i));
    const reset = await post('/v1/auth/reset-password', { email, code, new_password: newPassword });
    expect(reset.body).toEqual({ status: 'password_reset' });
  };

  it('ends every console session of that person, with the tokens they issued; other tokens and people keep theirs', async () => {
    // a tenant with a root token; the person is linked to it, so sessions and API tokens live side by side
    const owner = await api.newTenant('reset');
    const email = await confirmedAccount();
    const first = await post('/v1/auth/sign-in', { email, password: PASSWORD }, owner.token);
    expect(first.body).toMatchObject({ tenant_id: owner.tenantId, linked: true });
    const second = await post('/v1/auth/sign-in', { email, password: PASSWORD });
    const [s1, s2] = [first.body.token as string, second.body.token as string];
    // what a thief holding a session would mint to outlast the reset, and an agent token of the root token
    const minted = (await post('/v1/tokens', { name: 'minted by a session', scopes: ['read', 'manage'] }, s1)).body.token as string;
    const agent = (await post('/v1/tokens', { name: 'agent', scopes: ['read'] }, owner.token)).body.token as string;
    // someone else signed in to the same tenant
    const colleague = await confirmedAccount(address('colleague'));
    const theirs = (await post('/v1/auth/sign-in', { email: colleague, password: PASSWORD }, owner.token)).body.token as string;
    for (const token of [s1, s2, minted, agent, theirs]) expect(await status(token)).toBe(200);

    await resetTo(email, 'Reset-Horse-Battery-7');

    expect(await status(s1)).toBe(401);
    expect(await status(s2)).toBe(401);
    expect(await status(minted)).toBe(401);
    expect(await status(agent)).toBe(200);
    expect(await status(owner.token)).toBe(200);
    expect(await status(theirs)).toBe(200);
    // listed as revoked, not gone
    const listed = (await api.call('GET', '/v1/tokens', { token: owner.token })).body as { id: string; kind: string; revoked_at: string | null }[];
    expect(listed.filter((t) => t.kind === 'session' && t.revoked_at !== null)).toHaveLength(2);

    // the old password is refused; the new one signs in to the same tenant with a session that works
    expect((await post('/v1/auth/sign-in', { email, password: PASSWORD })).status).toBe(401);
    const again = await post('/v1/auth/sign-in', { email, password: 'Reset-Horse-Battery-7' });
    expect(again.body).toMatchObject({ status: 'signed_in', tenant_id: owner.tenantId });
    expect(await status(again.body.token)).toBe(200);
  });

  it('a failed reset (wrong code) ends nothing', async () => {
    const email = await confirmedAccount();
    const session = (await post('/v1/auth/sign-in', { email, password: PASSWORD })).body.token as string;
    expect((await post('/v1/auth/forgot-password', { email })).status).toBe(200);
    const code = codeOf(await mailTo(email, /reset/i));
    const wrong = `${code.slice(0, 5)}${(Number(code[5]) + 1) % 10}`;
    expect((await post('/v1/auth/reset-password', { email, code: wrong, new_password: 'Reset-Horse-Battery-7' })).status).toBe(422);
    expect(await status(session)).toBe(200);
  });
});

describe('link-or-provision', () => {
  it('with a bearer holding manage, a new identity is linked to the caller\'s tenant; then it signs in there', async () => {
    const owner = await api.newTenant('linking');
    const email = await confirmedAccount();
    const linked = await post('/v1/auth/sign-in', { email, password: PASSWORD }, owner.token);
    expect(linked.body).toMatchObject({ status: 'signed_in', tenant_id: owner.tenantId, linked: true });
    expect((await post('/v1/auth/sign-in', { email, password: PASSWORD })).body.tenant_id).toBe(owner.tenantId);
  });

  it('an identity of another tenant joins this one too; a bearer that is not root is 403; an invalid bearer is 401', async () => {
    const email = await confirmedAccount();
    const own = (await post('/v1/auth/sign-in', { email, password: PASSWORD })).body.tenant_id;
    const other = await api.newTenant('other');
    api.clock.advance(1_000);
    // a person may belong to several tenants: signed in with the other tenant's root token, they join it as well
    expect((await post('/v1/auth/sign-in', { email, password: PASSWORD }, other.token)).body).toMatchObject({ tenant_id: other.tenantId, linked: true });
    const reader = (await post('/v1/tokens', { scopes: ['read'] }, other.token)).body.token;
    expect((await post('/v1/auth/sign-in', { email, password: PASSWORD }, reader)).status).toBe(403);
    expect((await post('/v1/auth/sign-in', { email, password: PASSWORD }, 'gcp_tok_nope_AAAAAAAAAAAAAAAAAAAAAAAA')).status).toBe(401);
    expect((await post('/v1/auth/sign-in', { email, password: PASSWORD })).body.tenant_id).toBe(own);
  });

  it('ten parallel first sign-ins of one identity make one tenant', async () => {
    const email = await confirmedAccount();
    // ten: as many checks as one client address may have in flight for one email (sign-in-throttles.test.ts)
    const answers = await Promise.all(Array.from({ length: 10 }, () => post('/v1/auth/sign-in', { email, password: PASSWORD })));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(new Set(answers.map((a) => a.body.tenant_id)).size).toBe(1);
  });
});

describe('the hosted sign-in page and the code exchange (built-in provider)', () => {
  it('issues an authorization code for a PKCE request, exchanged once for a session', async () => {
    const email = await confirmedAccount();
    const config = (await api.call('GET', '/v1/auth/config')).body;
    expect(config).toEqual({
      idp: { kind: 'builtin', authorize_url: 'http://cp.test/auth/authorize', client_id: 'gpu-control-plane', code_challenge_method: 'S256' },
      device_flow: { provider: 'github' },
    });
    const redirect = 'http://127.0.0.1:53682/callback';
    /** The page as a browser walks it: the form, then the post that answers 303 to the redirect URI with a code. */
    const authorize = async () => {
      const { verifier, challenge } = pkcePair();
      const query = new URLSearchParams({ response_type: 'code', client_id: 'gpu-control-plane', redirect_uri: redirect, state: 'xyz', code_challenge: challenge, code_challenge_method: 'S256' });
      const page = await fetch(`${api.baseUrl}/auth/authorize?${query}`, { headers: { accept: 'text/html' } });
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<form');
      const posted = await fetch(`${api.baseUrl}/auth/authorize?${query}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
        body: new URLSearchParams({ email, password: PASSWORD, ...Object.fromEntries(query) }),
      });
      expect(posted.status).toBe(303);
      const location = new URL(posted.headers.get('location')!);
      expect(location.searchParams.get('state')).toBe('xyz');
      return { code: location.searchParams.get('code')!, verifier };
    };
    const wrong = await authorize();
    expect((await post('/v1/auth/idp/exchange', { code: wrong.code, redirect_uri: redirect, code_verifier: 'x'.repeat(43) })).status).toBe(422);
    const { code, verifier } = await authorize();
    const exchanged = await post('/v1/auth/idp/exchange', { code, redirect_uri: redirect, code_verifier: verifier });
    expect(exchanged.status).toBe(200);
    expect(exchanged.body).toMatchObject({ status: 'signed_in', token: expect.stringMatching(/^gcp_/) });
    expect((await post('/v1/auth/idp/exchange', { code, redirect_uri: redirect, code_verifier: verifier })).status).toBe(422);
  });
});

describe('an operator invitation', () => {
  it('opens the account with a mailed temporary password; the first sign-in asks for a new one', async () => {
    const owner = await api.newTenant('team');
    const email = address('invitee');
    const invited = await api.call('POST', '/v1/operator/users', { headers: op, body: { email, tenant_id: owner.tenantId } });
    expect(invited.status).toBe(201);
    expect(invited.body).toEqual({ email, tenant_id: owner.tenantId, status: 'invited' });
    const mail = await mailTo(email, /invited/);
    const temporary = /^Temporary password: (.+)$/m.exec(mail.text)![1]!;

    const first = await post('/v1/auth/sign-in', { email, password: temporary });
    expect(first.body).toEqual({ status: 'new_password_required', session: expect.any(String) });
    const done = await post('/v1/auth/new-password', { email, session: first.body.session, new_password: 'Chosen-By-Me-2026' });
    expect(done.body).toMatchObject({ status: 'signed_in', tenant_id: owner.tenantId });
    expect((await post('/v1/auth/sign-in', { email, password: 'Chosen-By-Me-2026' })).body.tenant_id).toBe(owner.tenantId);

    expect((await api.call('POST', '/v1/operator/users', { headers: op, body: { email } })).status).toBe(409);
    expect((await api.call('POST', '/v1/operator/users', { headers: op, body: { email: address(), tenant_id: 'ten_missing0' } })).status).toBe(404);
    const fresh = await api.call('POST', '/v1/operator/users', { headers: op, body: { email: address('solo') } });
    expect(fresh.body.tenant_id).toMatch(/^ten_/);
    expect((await api.call('POST', '/v1/operator/users', { body: { email: address() } })).status).toBe(401);
  });

  it('a temporary password lasts 7 days; then 409 says to ask for a new invitation, and inviting again mails a fresh one', async () => {
    const owner = await api.newTenant('late');
    const email = address('late');
    const invite = (body: Record<string, unknown>) => api.call('POST', '/v1/operator/users', { headers: op, body });
    expect((await invite({ email, tenant_id: owner.tenantId })).status).toBe(201);
    const firstMail = await mailTo(email, /invited/);
    const temporary = /^Temporary password: (.+)$/m.exec(firstMail.text)![1]!;

    api.clock.advance(7 * DAY);
    const late = await post('/v1/auth/sign-in', { email, password: temporary });
    expect(late.status).toBe(409);
    expect(late.body.detail).toMatch(/temporary password has expired.*ask the operator .*new invitation/);

    // invited again: the same tenant (another one is 409), a fresh password that works, the old one refused
    const other = await api.newTenant('elsewhere');
    expect((await invite({ email, tenant_id: other.tenantId })).status).toBe(409);
    const again = await invite({ email });
    expect(again.status).toBe(201);
    expect(again.body).toEqual({ email, tenant_id: owner.tenantId, status: 'invited' });
    const secondMail = await inbox.next((m) => m !== firstMail && m.to.includes(email) && /invited/.test(m.subject), 10_000);
    const fresh = /^Temporary password: (.+)$/m.exec(secondMail.text)![1]!;
    expect(fresh).not.toBe(temporary);
    // the refused invitation to another tenant renewed nothing and mailed nothing
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(inbox.received.filter((m) => m.to.includes(email))).toHaveLength(2);
    expect((await post('/v1/auth/sign-in', { email, password: temporary })).status).toBe(401);
    const step = await post('/v1/auth/sign-in', { email, password: fresh });
    expect(step.body).toEqual({ status: 'new_password_required', session: expect.any(String) });
    const done = await post('/v1/auth/new-password', { email, session: step.body.session, new_password: 'Chosen-Late-2026' });
    expect(done.body).toMatchObject({ status: 'signed_in', tenant_id: owner.tenantId });
  });
});

describe('GitHub device flow', () => {
  const start = async () => {
    const res = await post('/v1/auth/codehost/device/start', undefined);
    expect(res.status).toBe(200);
    return res.body as { device_code: string; user_code: string; verification_uri: string; expires_in: number; interval: number };
  };
  const poll = (deviceCode: string, token?: string) => post('/v1/auth/codehost/device/poll', { device_code: deviceCode }, token);
  let githubId = 7_000;

  it('pending, slow_down when polled too fast, then complete with a session of a fresh tenant; never twice', async () => {
    const begun = await start();
    expect(begun).toMatchObject({ user_code: expect.stringMatching(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/), verification_uri: expect.stringContaining('/login/device'), interval: 5 });
    expect((await poll(begun.device_code)).body).toEqual({ status: 'pending', interval: 5 });
    expect((await poll(begun.device_code)).body).toEqual({ status: 'slow_down', interval: 10 });
    github.state.approve(begun.user_code, { id: ++githubId, login: 'octo', email: 'octo@example.com', emailVerified: true });
    api.clock.advance(11_000);
    const done = await poll(begun.device_code);
    expect(done.body).toMatchObject({ status: 'complete', token: expect.stringMatching(/^gcp_/), tenant_id: expect.stringMatching(/^ten_/), linked: false });
    api.clock.advance(11_000);
    expect((await poll(begun.device_code)).body.status).toBe('expired');
    // the same GitHub account signs in to the same tenant, whatever its login becomes
    const next = await start();
    github.state.approve(next.user_code, { id: githubId, login: 'octo-renamed', email: 'octo@example.com', emailVerified: true });
    api.clock.advance(6_000);
    expect((await poll(next.device_code)).body.tenant_id).toBe(done.body.tenant_id);
  });

  it('twenty parallel polls of an approved code make one tenant', async () => {
    const begun = await start();
    github.state.approve(begun.user_code, { id: ++githubId, login: 'many', email: null, emailVerified: false });
    api.clock.advance(6_000);
    const answers = await Promise.all(Array.from({ length: 20 }, () => poll(begun.device_code)));
    const complete = answers.filter((a) => a.body.status === 'complete');
    expect(complete).toHaveLength(1);
    expect(answers.every((a) => a.status === 200)).toBe(true);
  });

  it('denied and expired codes say so; a bearer with manage links the GitHub identity to its tenant', async () => {
    const denied = await start();
    github.state.deny(denied.user_code);
    api.clock.advance(6_000);
    expect((await poll(denied.device_code)).body.status).toBe('denied');
    const late = await start();
    api.clock.advance(late.expires_in * 1000 + 1_000);
    expect((await poll(late.device_code)).body.status).toBe('expired');
    expect((await poll('never-issued')).body.status).toBe('expired');

    const owner = await api.newTenant('gh-link');
    const linking = await start();
    github.state.approve(linking.user_code, { id: ++githubId, login: 'linker', email: 'l@example.com', emailVerified: true });
    api.clock.advance(6_000);
    expect((await poll(linking.device_code, owner.token)).body).toMatchObject({ status: 'complete', tenant_id: owner.tenantId, linked: true });
  });
});

describe('without GitHub configured', () => {
  it('the device routes answer 409 naming GITHUB_CLIENT_ID; /v1/auth/config shows the built-in provider and no device flow', async () => {
    const bare = await startApi();
    try {
      for (const [path, body] of [['/v1/auth/codehost/device/start', undefined], ['/v1/auth/codehost/device/poll', { device_code: 'x' }]] as const) {
        const res = await bare.call('POST', path, { body });
        expect(res.status).toBe(409);
        expect(res.body.detail).toContain('GITHUB_CLIENT_ID');
      }
      const config = (await bare.call('GET', '/v1/auth/config')).body;
      expect(config.idp.kind).toBe('builtin');
      expect(config.device_flow).toBeNull();
    } finally {
      await bare.close();
    }
  });
});
