import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../adapters/clock/manual-clock.ts';
import { createBuiltinIdentity, type BuiltinIdentity } from '../../adapters/identity/builtin/index.ts';
import { MikroStorage } from '../../adapters/storage/mikro-storage.ts';
import { rateLimited } from '../../core/errors.ts';
import type { TenancyService } from '../../core/tenancy/tenancy-service.ts';
import { createHttpApp } from '../../hosts/http/app.ts';
import { errorHandler } from '../../hosts/http/error-handler.ts';
import { buildRouter } from '../../hosts/http/router.ts';
import { authorizeRoutes, type AuthorizeDeps } from '../../hosts/http/routes/authorize-routes.ts';
import { listenHttp } from '../../hosts/http/server.ts';
import { pkcePair } from '../contract/identity-contract.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { codeIn, isConfirmationMail, MailOutbox, temporaryPasswordIn } from '../support/mail-outbox.ts';

const PASSWORD = 'Correct-Horse-42';
const CLI_REDIRECT = 'http://127.0.0.1:53682/callback';
const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

let database: TestDatabase;
let storage: MikroStorage;
let identity: BuiltinIdentity;
let outbox: MailOutbox;
let server: Server;
let baseUrl: string;
/** What the page was given to sign in with; a test may swap it (a throttled core, a spy). */
let signIn: AuthorizeDeps['signIn'];

beforeAll(async () => {
  database = await freshDatabase();
  storage = await MikroStorage.open(database.target);
  outbox = new MailOutbox();
  identity = createBuiltinIdentity({
    database: storage,
    clock: new ManualClock(new Date()),
    mailer: outbox,
    publicUrl: 'http://cp.test:8080',
    redirectUris: ['https://console.example/auth/done'],
  });
  signIn = (email, password) => identity.signIn(email, password);
  const routes = authorizeRoutes({ identity, signIn: (email, password, client) => signIn(email, password, client), completeNewPassword: (...args) => identity.completeNewPassword(...args) });
  const logger = pino({ level: 'silent' });
  const router = express.Router();
  // the control plane's own pipeline for these routes; they are public, so no tenancy is ever asked
  router.use(buildRouter(routes, { tenancy: {} as TenancyService, operatorKeys: [], rateLimits: { publicPerMinute: 100_000, perTokenPerMinute: 100_000 } }));
  router.use(errorHandler(logger));
  server = listenHttp(createHttpApp({ router, routes, logger }), 0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await identity?.idle();
  await storage?.close();
  await database?.drop();
});

let serial = 0;
const address = (label: string) => `${label}-${process.pid}-${++serial}@example.com`;

const confirmedUser = async (email: string) => {
  await identity.signUp(email, PASSWORD);
  await identity.confirmEmail(email, codeIn(await outbox.next(email, 'confirm', isConfirmationMail)));
};

const oauthQuery = (overrides: Record<string, string | null> = {}, challenge = pkcePair().challenge) => {
  const fields: Record<string, string | null> = {
    response_type: 'code',
    client_id: 'gpu-control-plane',
    redirect_uri: CLI_REDIRECT,
    state: 'st-1',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...overrides,
  };
  return Object.fromEntries(Object.entries(fields).filter((entry): entry is [string, string] => entry[1] !== null));
};

const getPage = (query: Record<string, string>, headers: Record<string, string> = BROWSER) =>
  fetch(`${baseUrl}/auth/authorize?${new URLSearchParams(query)}`, { headers, redirect: 'manual' });

const post = (fields: Record<string, string>, headers: Record<string, string> = BROWSER) =>
  fetch(`${baseUrl}/auth/authorize`, { method: 'POST', headers: { ...FORM, ...headers }, body: new URLSearchParams(fields).toString(), redirect: 'manual' });

const hiddenValue = (html: string, name: string): string => {
  const found = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  if (!found) throw new Error(`no field ${name}`);
  return found[1]!.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));
};

describe('GET /auth/authorize', () => {
  it('shows an accessible sign-in form carrying the request, never cached or framed', async () => {
    const query = oauthQuery({ state: '"><script>alert(1)</script>' });
    const response = await getPage(query);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
    const html = await response.text();
    expect(html).toMatch(/<html lang="en">/);
    expect(html).toMatch(/<label for="email">Email<\/label><input id="email" name="email" type="email" autocomplete="username" required/);
    expect(html).toMatch(/<label for="password">Password<\/label><input id="password" name="password" type="password" autocomplete="current-password" required/);
    expect(html).not.toContain('<script>');
    expect(hiddenValue(html, 'state')).toBe(query.state);
    expect(hiddenValue(html, 'redirect_uri')).toBe(CLI_REDIRECT);
    expect(hiddenValue(html, 'code_challenge')).toBe(query.code_challenge);
  });

  it('accepts this server\'s origin, loopback addresses on any port and the configured URIs', async () => {
    for (const uri of [
      'http://cp.test:8080/console/callback',
      'http://127.0.0.1:9/cb',
      'http://localhost:61234/',
      'http://[::1]:8000/cb',
      'https://console.example/auth/done',
    ]) {
      expect((await getPage(oauthQuery({ redirect_uri: uri }))).status, uri).toBe(200);
    }
  });

  it('refuses a wrong request with a 400 page (or {detail}), and never redirects to the URI it was given', async () => {
    const wrong: [string, Record<string, string | null>][] = [
      ['no redirect_uri', { redirect_uri: null }],
      ['a foreign redirect_uri', { redirect_uri: 'https://evil.example/cb' }],
      ['a configured URI with another path', { redirect_uri: 'https://console.example/auth/done/x' }],
      ['another port of our host over https', { redirect_uri: 'https://cp.test:8443/cb' }],
      ['a fragment', { redirect_uri: 'http://127.0.0.1:9/cb#x' }],
      ['credentials', { redirect_uri: 'http://user:pw@127.0.0.1:9/cb' }],
      ['a javascript: URI', { redirect_uri: 'javascript:alert(1)' }],
      ['another client', { client_id: 'someone-else' }],
      ['the implicit flow', { response_type: 'token' }],
      ['PKCE plain', { code_challenge_method: 'plain' }],
      ['no PKCE', { code_challenge: null, code_challenge_method: null }],
      ['a short challenge', { code_challenge: 'abc' }],
      ['a long state', { state: 'x'.repeat(1_025) }],
    ];
    for (const [why, overrides] of wrong) {
      const page = await getPage(oauthQuery(overrides));
      expect({ why, status: page.status, location: page.headers.get('location') }).toEqual({ why, status: 400, location: null });
      expect(page.headers.get('content-type'), why).toMatch(/^text\/html/);
      expect(await page.text(), why).toMatch(/role="alert"/);

      const api = await getPage(oauthQuery(overrides), {});
      expect({ why, status: api.status }).toEqual({ why, status: 400 });
      expect(await api.json(), why).toEqual({ detail: expect.any(String) });
    }
  });

  it('names what is wrong with the redirect URI and escapes what it echoes', async () => {
    const page = await getPage(oauthQuery({ redirect_uri: 'https://evil.example/<b>' }));
    const html = await page.text();
    expect(html).toMatch(/redirect_uri is not allowed/);
    expect(html).not.toContain('<b>');
  });
});

describe('POST /auth/authorize', () => {
  it('signs in and sends the browser to the redirect URI with a code and the state; the code swaps once for the identity', async () => {
    const email = address('page');
    await confirmedUser(email);
    const pkce = pkcePair();
    const redirect = 'http://127.0.0.1:53682/callback?keep=1';
    const answer = await post({ ...oauthQuery({ redirect_uri: redirect, state: 'a b&c' }, pkce.challenge), step: 'sign_in', email, password: PASSWORD });
    expect(answer.status).toBe(303);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    const location = new URL(answer.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe('http://127.0.0.1:53682/callback');
    expect(location.searchParams.get('keep')).toBe('1');
    expect(location.searchParams.get('state')).toBe('a b&c');
    const code = location.searchParams.get('code')!;
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const person = await identity.exchangeCode({ code, redirectUri: redirect, codeVerifier: pkce.verifier });
    expect(person).toMatchObject({ provider: 'builtin', email });
    await expect(identity.exchangeCode({ code, redirectUri: redirect, codeVerifier: pkce.verifier })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('leaves state out of the redirect when the request had none', async () => {
    const email = address('nostate');
    await confirmedUser(email);
    const answer = await post({ ...oauthQuery({ state: null }), step: 'sign_in', email, password: PASSWORD });
    const location = new URL(answer.headers.get('location')!);
    expect([...location.searchParams.keys()]).toEqual(['code']);
  });

  it('shows the form again with the reason on a wrong password (401), and for an unconfirmed address (409)', async () => {
    const email = address('wrong');
    await confirmedUser(email);
    const wrong = await post({ ...oauthQuery(), step: 'sign_in', email, password: 'Not-The-Password-1' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('location')).toBeNull();
    const html = await wrong.text();
    expect(html).toMatch(/role="alert">Wrong email or password\./);
    expect(html).toContain(`value="${email}"`);
    expect(html).toMatch(/aria-describedby="form-error"/);

    const unconfirmed = address('unconfirmed');
    await identity.signUp(unconfirmed, PASSWORD);
    const conflict = await post({ ...oauthQuery(), step: 'sign_in', email: unconfirmed, password: PASSWORD });
    expect(conflict.status).toBe(409);
    expect(await conflict.text()).toMatch(/not confirmed yet/);

    const api = await post({ ...oauthQuery(), step: 'sign_in', email, password: 'Not-The-Password-1' }, {});
    expect(api.status).toBe(401);
    expect(await api.json()).toEqual({ detail: expect.stringMatching(/wrong email or password/) });
  });

  it('asks for both fields', async () => {
    const missing = await post({ ...oauthQuery(), step: 'sign_in', email: 'someone@example.com' });
    expect(missing.status).toBe(422);
    expect(await missing.text()).toMatch(/Enter your email and your password/);
  });

  it('walks an invited person through choosing a new password, then redirects with a code', async () => {
    const email = address('invited');
    await identity.invite(email);
    await identity.idle();
    const temporary = temporaryPasswordIn(outbox.to(email).at(-1)!)!;
    const pkce = pkcePair();
    const request = oauthQuery({}, pkce.challenge);

    const step = await post({ ...request, step: 'sign_in', email, password: temporary });
    expect(step.status).toBe(200);
    const html = await step.text();
    expect(html).toMatch(/Choose a new password/);
    expect(html).toMatch(/<label for="new_password">New password<\/label><input id="new_password" name="new_password" type="password" autocomplete="new-password"/);
    const session = hiddenValue(html, 'session');
    expect(hiddenValue(html, 'redirect_uri')).toBe(CLI_REDIRECT);

    const weak = await post({ ...request, step: 'new_password', email, session, new_password: 'short', new_password_again: 'short' });
    expect(weak.status).toBe(422);
    expect(await weak.text()).toMatch(/The password must be at least 10 characters/);

    const differ = await post({ ...request, step: 'new_password', email, session, new_password: 'Battery-Staple-77', new_password_again: 'Battery-Staple-78' });
    expect(differ.status).toBe(422);
    expect(await differ.text()).toMatch(/differ/);

    const done = await post({ ...request, step: 'new_password', email, session, new_password: 'Battery-Staple-77', new_password_again: 'Battery-Staple-77' });
    expect(done.status).toBe(303);
    const code = new URL(done.headers.get('location')!).searchParams.get('code')!;
    expect(await identity.exchangeCode({ code, redirectUri: CLI_REDIRECT, codeVerifier: pkce.verifier })).toMatchObject({ email });

    // the session was used: the form starts over at sign-in
    const again = await post({ ...request, step: 'new_password', email, session, new_password: 'Third-Password-99', new_password_again: 'Third-Password-99' });
    expect(again.status).toBe(401);
    expect(await again.text()).toMatch(/Sign in again/);
  });

  it('checks the posted OAuth fields again before asking for the password', async () => {
    const asked: string[] = [];
    const before = signIn;
    signIn = async (email, password, client) => {
      asked.push(email);
      return before(email, password, client);
    };
    try {
      const tampered = await post({ ...oauthQuery({ redirect_uri: 'https://evil.example/cb' }), step: 'sign_in', email: 'x@example.com', password: PASSWORD });
      expect(tampered.status).toBe(400);
      expect(tampered.headers.get('location')).toBeNull();
      expect(asked).toEqual([]);
    } finally {
      signIn = before;
    }
  });

  it('passes a throttled sign-in on as 429 with Retry-After', async () => {
    const before = signIn;
    signIn = async () => {
      throw rateLimited('too many failed sign-ins for this email', 120);
    };
    try {
      const page = await post({ ...oauthQuery(), step: 'sign_in', email: 'x@example.com', password: PASSWORD });
      expect(page.status).toBe(429);
      expect(page.headers.get('retry-after')).toBe('120');
      expect(await page.text()).toMatch(/Too many failed sign-ins/);
      const api = await post({ ...oauthQuery(), step: 'sign_in', email: 'x@example.com', password: PASSWORD }, {});
      expect(api.status).toBe(429);
      expect(api.headers.get('retry-after')).toBe('120');
    } finally {
      signIn = before;
    }
  });

  it('takes only forms: JSON is 415', async () => {
    const json = await fetch(`${baseUrl}/auth/authorize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(oauthQuery()) });
    expect(json.status).toBe(415);
    expect(await json.json()).toEqual({ detail: expect.stringMatching(/application\/x-www-form-urlencoded/) });
  });
});
