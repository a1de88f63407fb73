import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { DomainError } from '../../../core/errors.ts';
import type { Identity } from '../../../core/ports/identity.ts';
import { createCognitoIdentity, IdTokenRejected, type CognitoIdentityConfig } from '../../../adapters/identity/cognito/index.ts';
import { secretHash } from '../../../adapters/identity/cognito/mapping.ts';
import { codeChallengeOf, startFakeCognito, type FakeCognito, type FakeCognitoOptions } from '../../fakes/cognito/server.ts';

const PASSWORD = 'Correct-Horse-42';
const REDIRECT = 'https://console.example.com/callback';

let fake: FakeCognito | null = null;
afterEach(async () => {
  await fake?.close();
  fake = null;
});

/** The adapter against a fresh fake pool: one attempt per call, so injected faults are seen as they are. */
const open = async (options: FakeCognitoOptions = {}, overrides: Partial<CognitoIdentityConfig> = {}): Promise<{ fake: FakeCognito; identity: Identity }> => {
  fake = await startFakeCognito(options);
  const identity = createCognitoIdentity({
    region: fake.state.region,
    userPoolId: fake.state.userPoolId,
    clientId: fake.state.clientId,
    ...(fake.state.clientSecret && { clientSecret: fake.state.clientSecret }),
    domain: fake.url,
    endpoint: fake.url,
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'fake-secret' },
    timeoutMs: 2_000,
    maxAttempts: 1,
    ...overrides,
  });
  return { fake, identity };
};

const confirmedUser = async (f: FakeCognito, identity: Identity, email: string) => {
  await identity.signUp(email, PASSWORD);
  await identity.confirmEmail(email, f.state.lastCode(email, 'confirm')!);
};

const domainError = async (promise: Promise<unknown>): Promise<DomainError> => {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DomainError);
  return error as DomainError;
};

const rejection = async (promise: Promise<unknown>): Promise<Error> => {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  return error as Error;
};

describe('cognito: the wire', () => {
  it('speaks JSON 1.1: POST / with the target header and content type, unsigned except AdminCreateUser', async () => {
    const { fake, identity } = await open();
    await confirmedUser(fake, identity, 'wire@example.com');
    await identity.invite('invited@example.com');
    const signUp = fake.state.callsTo('SignUp')[0]!;
    expect(signUp.headers['x-amz-target']).toBe('AWSCognitoIdentityProviderService.SignUp');
    expect(signUp.headers['content-type']).toBe('application/x-amz-json-1.1');
    expect(signUp.headers.authorization).toBeUndefined();
    expect(signUp.body).toMatchObject({ Username: 'wire@example.com', UserAttributes: [{ Name: 'email', Value: 'wire@example.com' }] });
    expect(String(fake.state.callsTo('AdminCreateUser')[0]!.headers.authorization)).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\//);
  });

  it('without a client secret, no SecretHash is sent', async () => {
    const { fake, identity } = await open();
    await confirmedUser(fake, identity, 'public@example.com');
    await identity.signIn('public@example.com', PASSWORD);
    expect(fake.state.callsTo('SignUp')[0]!.body).not.toHaveProperty('SecretHash');
    expect((fake.state.callsTo('InitiateAuth')[0]!.body as { AuthParameters: object }).AuthParameters).not.toHaveProperty('SECRET_HASH');
  });
});

describe('cognito: SECRET_HASH', () => {
  const secret = 'k9' + randomBytes(24).toString('hex');

  it('every call carries SECRET_HASH of its username, and the challenge answer that of the internal one', async () => {
    const { fake, identity } = await open({ clientSecret: secret });
    const { clientId } = fake.state;
    const email = 'hash@example.com';
    await confirmedUser(fake, identity, email);
    await identity.resendCode('other@example.com');
    await identity.forgotPassword(email);
    await identity.resetPassword(email, fake.state.lastCode(email, 'reset')!, 'Another-Pass-43');
    const signedIn = await identity.signIn(email, 'Another-Pass-43');
    expect(signedIn.kind).toBe('signed_in');

    const expected = secretHash(secret, email, clientId);
    for (const op of ['SignUp', 'ConfirmSignUp', 'ForgotPassword', 'ConfirmForgotPassword']) {
      expect((fake.state.callsTo(op)[0]!.body as { SecretHash?: string }).SecretHash, op).toBe(expected);
    }
    expect((fake.state.callsTo('ResendConfirmationCode')[0]!.body as { SecretHash?: string }).SecretHash).toBe(
      secretHash(secret, 'other@example.com', clientId),
    );
    expect((fake.state.callsTo('InitiateAuth')[0]!.body as { AuthParameters: { SECRET_HASH: string } }).AuthParameters.SECRET_HASH).toBe(expected);

    // an invited user's new password: Cognito checks the hash of the internal username (the sub)
    const invited = await identity.invite('new@example.com');
    const first = await identity.signIn('new@example.com', fake.state.temporaryPassword('new@example.com')!);
    expect(first.kind).toBe('new_password_required');
    if (first.kind !== 'new_password_required') return;
    const completed = await identity.completeNewPassword('new@example.com', first.session, 'Brand-New-Pass-44');
    expect(completed).toEqual(invited);
    const responses = (fake.state.callsTo('RespondToAuthChallenge')[0]!.body as { ChallengeResponses: Record<string, string> }).ChallengeResponses;
    expect(responses.USERNAME).toBe(invited.subject);
    expect(responses.SECRET_HASH).toBe(secretHash(secret, invited.subject, clientId));
  });

  it('a wrong COGNITO_CLIENT_SECRET is an error naming it, never a wrong password or a silent "code sent"', async () => {
    const { fake, identity } = await open({ clientSecret: secret }, { clientSecret: 'not-the-secret' });
    const signIn = await rejection(identity.signIn('anyone@example.com', PASSWORD));
    expect(signIn).not.toBeInstanceOf(DomainError);
    expect(signIn.message).toContain('COGNITO_CLIENT_SECRET');
    const forgot = await rejection(identity.forgotPassword('anyone@example.com'));
    expect(forgot).not.toBeInstanceOf(DomainError);
    expect(fake.state.outbox).toHaveLength(0);
  });

  it('a missing secret is refused the same way', async () => {
    const { identity } = await open({ clientSecret: secret }, { clientSecret: undefined });
    const error = await rejection(identity.signUp('anyone@example.com', PASSWORD));
    expect(error).not.toBeInstanceOf(DomainError);
    expect(error.message).toMatch(/secret was not received.*COGNITO_CLIENT_SECRET/);
  });

  it('the hosted UI token endpoint gets HTTP Basic with the client id and secret', async () => {
    const { fake, identity } = await open({ clientSecret: secret });
    await confirmedUser(fake, identity, 'basic@example.com');
    const verifier = randomBytes(32).toString('base64url');
    const code = fake.state.authorize('basic@example.com', PASSWORD, REDIRECT, codeChallengeOf(verifier));
    const found = await identity.exchangeCode({ code, redirectUri: REDIRECT, codeVerifier: verifier });
    expect(found.email).toBe('basic@example.com');
    const call = fake.state.callsTo('/oauth2/token')[0]!;
    expect(call.headers.authorization).toBe(`Basic ${Buffer.from(`${fake.state.clientId}:${secret}`).toString('base64')}`);
    expect(call.body).toMatchObject({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier });
  });
});

describe('cognito: id tokens are verified, never trusted', () => {
  const signInWith = async (tamper: (claims: Record<string, unknown>, f: FakeCognito) => Promise<string> | string) => {
    const { fake, identity } = await open();
    await confirmedUser(fake, identity, 'jwt@example.com');
    fake.state.replaceNextIdToken((claims) => tamper(claims, fake));
    return identity.signIn('jwt@example.com', PASSWORD);
  };

  it('an untampered token passes, and the JWKS is fetched once for many sign-ins', async () => {
    const { fake, identity } = await open();
    await confirmedUser(fake, identity, 'cache@example.com');
    for (let i = 0; i < 3; i += 1) expect((await identity.signIn('cache@example.com', PASSWORD)).kind).toBe('signed_in');
    expect(fake.state.callsTo(`/${fake.state.userPoolId}/.well-known/jwks.json`)).toHaveLength(1);
  });

  it.each([
    ['another issuer', (c: Record<string, unknown>, f: FakeCognito) => f.state.sign({ ...c, iss: 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Other' }), /iss/],
    ['another audience', (c: Record<string, unknown>, f: FakeCognito) => f.state.sign({ ...c, aud: 'another-client' }), /aud/],
    ['an expired token', (c: Record<string, unknown>, f: FakeCognito) => f.state.sign({ ...c, iat: 1_000, exp: Math.floor(Date.now() / 1000) - 120 }), /exp/],
    ['an access token', (c: Record<string, unknown>, f: FakeCognito) => f.state.sign({ ...c, token_use: 'access' }), /token_use/],
    ['no token_use', (c: Record<string, unknown>, f: FakeCognito) => f.state.sign({ ...c, token_use: undefined }), /token_use/],
    ['a key outside the JWKS', (c: Record<string, unknown>, f: FakeCognito) => f.state.sign(c, { foreignKey: true }), /signature/],
    ['an unsigned token', (c: Record<string, unknown>) => `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify(c)).toString('base64url')}.`, /.+/],
  ])('rejects %s at sign-in', async (_what, tamper, reason) => {
    const error = await rejection(signInWith(tamper));
    expect(error).toBeInstanceOf(IdTokenRejected);
    expect(error).not.toBeInstanceOf(DomainError);
    expect(error.message).toMatch(reason);
  });

  it('rejects a bad token from the hosted UI too', async () => {
    const { fake, identity } = await open();
    await confirmedUser(fake, identity, 'ui@example.com');
    fake.state.replaceNextIdToken((claims) => fake.state.sign({ ...claims, aud: 'another-client' }));
    const code = fake.state.authorize('ui@example.com', PASSWORD, REDIRECT, null);
    const error = await rejection(identity.exchangeCode({ code, redirectUri: REDIRECT, codeVerifier: null }));
    expect(error).toBeInstanceOf(IdTokenRejected);
  });

  it('an unreachable JWKS is an outage, not a rejected token', async () => {
    const { fake, identity } = await open();
    await confirmedUser(fake, identity, 'outage@example.com');
    fake.state.failNext(1, 'InternalErrorException', { status: 500, match: `/${fake.state.userPoolId}/.well-known/jwks.json` });
    const error = await rejection(identity.signIn('outage@example.com', PASSWORD));
    expect(error).not.toBeInstanceOf(IdTokenRejected);
    expect(error).not.toBeInstanceOf(DomainError);
    expect(error.message).toMatch(/JWKS/);
  });

  it('the identity is the sub and the verified address', async () => {
    const { fake, identity } = await open();
    await confirmedUser(fake, identity, 'Mixed.Case@Example.com');
    const outcome = await identity.signIn('mixed.case@example.com', PASSWORD);
    expect(outcome).toEqual({
      kind: 'signed_in',
      identity: { provider: 'cognito', subject: fake.state.userByEmail('mixed.case@example.com')!.sub, email: 'Mixed.Case@Example.com' },
    });
  });
});

describe('cognito: Cognito\'s answers as the port\'s outcomes', () => {
  it('in a LEGACY pool (user existence errors shown) an unknown address still gets no different answer', async () => {
    const { fake, identity } = await open({ preventUserExistenceErrors: false });
    await confirmedUser(fake, identity, 'known@example.com');
    expect((await domainError(identity.signIn('unknown@example.com', PASSWORD))).code).toBe('INVALID_CREDENTIALS');
    expect((await domainError(identity.signIn('known@example.com', 'Wrong-Pass-00'))).code).toBe('INVALID_CREDENTIALS');
    expect(await identity.forgotPassword('unknown@example.com')).toEqual({ destination: 'u***@e***.com' });
    expect(await identity.resendCode('unknown@example.com')).toEqual({ destination: 'u***@e***.com' });
    expect(fake.state.callsTo('ForgotPassword')[0]!.status).toBe(400);
    const confirm = await domainError(identity.confirmEmail('unknown@example.com', '123456'));
    expect(confirm.problems[0]?.loc).toEqual(['body', 'code']);
  });

  it('states that cannot take a code answer as if one was sent: confirmed (resend), invited (forgot), unconfirmed (forgot)', async () => {
    const { fake, identity } = await open();
    await confirmedUser(fake, identity, 'done@example.com');
    await identity.invite('invited@example.com');
    await identity.signUp('pending@example.com', PASSWORD);
    expect(await identity.resendCode('done@example.com')).toEqual({ destination: 'd***@e***.com' });
    expect(await identity.forgotPassword('invited@example.com')).toEqual({ destination: 'i***@e***.com' });
    expect(await identity.forgotPassword('pending@example.com')).toEqual({ destination: 'p***@e***.com' });
    expect(fake.state.callsTo('ForgotPassword').map((c) => c.status)).toEqual([400, 400]);
  });

  it('throttling is 429-worthy, a 5xx or a dead endpoint is an outage', async () => {
    const { fake, identity } = await open();
    fake.state.failNext(1, 'TooManyRequestsException', { message: 'Rate exceeded' });
    const throttled = await domainError(identity.signIn('a@example.com', PASSWORD));
    expect(throttled.code).toBe('RATE_LIMITED');
    expect(throttled.retryAfterSeconds).toBeGreaterThan(0);
    fake.state.failNext(1, 'LimitExceededException', { message: 'Attempt limit exceeded, please try after some time.' });
    expect((await domainError(identity.forgotPassword('a@example.com'))).code).toBe('RATE_LIMITED');
    fake.state.failNext(1, 'InternalErrorException', { status: 500 });
    const outage = await rejection(identity.signUp('a@example.com', PASSWORD));
    expect(outage).not.toBeInstanceOf(DomainError);

    const dead = await open({}, { endpoint: 'http://127.0.0.1:9', domain: 'http://127.0.0.1:9' });
    const refused = await rejection(dead.identity.forgotPassword('a@example.com'));
    expect(refused).not.toBeInstanceOf(DomainError);
    const hostedUi = await rejection(dead.identity.exchangeCode({ code: 'c', redirectUri: REDIRECT, codeVerifier: null }));
    expect(hostedUi).not.toBeInstanceOf(DomainError);
  });

  it('the SDK retries a 5xx when attempts allow', async () => {
    const { fake, identity } = await open({}, { maxAttempts: 2 });
    fake.state.failNext(1, 'InternalErrorException', { status: 500, match: 'SignUp' });
    expect(await identity.signUp('retry@example.com', PASSWORD)).toEqual({ destination: 'r***@e***.com' });
    expect(fake.state.callsTo('SignUp').map((c) => c.status)).toEqual([500, 200]);
  });

  it('a password the API itself refuses (leading space) is INVALID_INPUT on the field, not an outage', async () => {
    const { identity } = await open();
    const error = await domainError(identity.signUp('space@example.com', ' Leading-Space-1'));
    expect(error.problems[0]?.loc).toEqual(['body', 'password']);
  });

  it('a challenge this API does not handle (MFA) is CONFLICT with what to do', async () => {
    const { fake, identity } = await open();
    await confirmedUser(fake, identity, 'mfa@example.com');
    fake.state.challengeNext('SMS_MFA');
    const error = await domainError(identity.signIn('mfa@example.com', PASSWORD));
    expect(error.code).toBe('CONFLICT');
    expect(error.message).toMatch(/SMS_MFA.*hosted UI/);
  });

  it('an app client without USER_PASSWORD_AUTH is a configuration error naming the setting', async () => {
    const { fake, identity } = await open();
    await confirmedUser(fake, identity, 'flow@example.com');
    fake.state.userPasswordAuth = false;
    const error = await rejection(identity.signIn('flow@example.com', PASSWORD));
    expect(error).not.toBeInstanceOf(DomainError);
    expect(error.message).toContain('ALLOW_USER_PASSWORD_AUTH');
  });

  it('an expired session sends the user back to sign in; an expired temporary password to the operator for a new invitation', async () => {
    const { fake, identity } = await open({ sessionTtlMs: 50 });
    await identity.invite('late@example.com');
    const first = await identity.signIn('late@example.com', fake.state.temporaryPassword('late@example.com')!);
    if (first.kind !== 'new_password_required') throw new Error('expected the new-password step');
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect((await domainError(identity.completeNewPassword('late@example.com', first.session, 'Brand-New-Pass-44'))).code).toBe('INVALID_CREDENTIALS');
    expect((await domainError(identity.completeNewPassword('late@example.com', 'garbage', 'Brand-New-Pass-44'))).problems[0]?.loc).toEqual(['body', 'session']);
    fake.state.expireCodes('late@example.com');
    const expired = await domainError(identity.signIn('late@example.com', fake.state.temporaryPassword('late@example.com')!));
    expect({ code: expired.code, message: expired.message }).toEqual({ code: 'CONFLICT', message: expect.stringMatching(/expired.*ask the operator .* new invitation/) });
    // a wrong password for that user is still the one 401
    expect((await domainError(identity.signIn('late@example.com', 'Not-The-Temporary-1'))).code).toBe('INVALID_CREDENTIALS');
    // the invitation sent again (AdminCreateUser RESEND): a fresh temporary password that works
    expect((await identity.invite('late@example.com')).subject).toBe(fake.state.userByEmail('late@example.com')!.sub);
    expect(fake.state.callsTo('AdminCreateUser').at(-1)!.body).toMatchObject({ MessageAction: 'RESEND', Username: 'late@example.com' });
    expect(await identity.signIn('late@example.com', fake.state.temporaryPassword('late@example.com')!)).toMatchObject({ kind: 'new_password_required' });
  });

  it('a reset names the user through AdminGetUser (signed); if that fails the answer says the password is set but sessions were not ended', async () => {
    const { fake, identity } = await open();
    await confirmedUser(fake, identity, 'reset@example.com');
    await identity.forgotPassword('reset@example.com');
    const user = fake.state.userByEmail('reset@example.com')!;
    expect(await identity.resetPassword('reset@example.com', fake.state.lastCode('reset@example.com', 'reset')!, 'Brand-New-Pass-44')).toEqual({
      provider: 'cognito',
      subject: user.sub,
      email: 'reset@example.com',
    });
    const get = fake.state.callsTo('AdminGetUser')[0]!;
    expect(String(get.headers.authorization)).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\//);
    expect(get.body).toEqual({ UserPoolId: fake.state.userPoolId, Username: 'reset@example.com' });

    await identity.forgotPassword('reset@example.com');
    fake.state.failNext(1, 'AccessDeniedException', { match: 'AdminGetUser' });
    const failed = await domainError(identity.resetPassword('reset@example.com', fake.state.lastCode('reset@example.com', 'reset')!, 'Third-New-Pass-55'));
    expect(failed.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(failed.message).toMatch(/new password is set.*sessions were not ended.*AdminGetUser/);
    expect(await identity.signIn('reset@example.com', 'Third-New-Pass-55')).toMatchObject({ kind: 'signed_in' });
  });

  it('another address cannot complete someone\'s new-password step', async () => {
    const { fake, identity } = await open();
    await identity.invite('owner@example.com');
    const first = await identity.signIn('owner@example.com', fake.state.temporaryPassword('owner@example.com')!);
    if (first.kind !== 'new_password_required') throw new Error('expected the new-password step');
    expect((await domainError(identity.completeNewPassword('intruder@example.com', first.session, 'Brand-New-Pass-44'))).code).toBe('INVALID_CREDENTIALS');
  });
});

describe('cognito: invitations and the mail allowance', () => {
  it('with mail: false the user is made with SUPPRESS and nothing is sent; a pending invitation is not resent; inviting again mails', async () => {
    const { fake, identity } = await open();
    const invited = await identity.invite('quiet@example.com', { mail: false });
    expect(fake.state.callsTo('AdminCreateUser')[0]!.body).toMatchObject({ MessageAction: 'SUPPRESS' });
    expect(await identity.invite('quiet@example.com', { mail: false })).toEqual(invited);
    expect(fake.state.outbox.filter((m) => m.to === 'quiet@example.com')).toEqual([]);
    expect(await identity.invite('quiet@example.com')).toEqual(invited);
    expect(fake.state.outbox.filter((m) => m.to === 'quiet@example.com').map((m) => m.kind)).toEqual(['invite']);
  });

  it('takes over an UNCONFIRMED sign-up by deleting and making the user again (a new sub), signed', async () => {
    const { fake, identity } = await open();
    await identity.signUp('squat@example.com', PASSWORD);
    const squatter = fake.state.userByEmail('squat@example.com')!.sub;
    const invited = await identity.invite('squat@example.com');
    expect(invited.subject).not.toBe(squatter);
    expect(fake.state.userByEmail('squat@example.com')!.status).toBe('FORCE_CHANGE_PASSWORD');
    expect(String(fake.state.callsTo('AdminDeleteUser')[0]!.headers.authorization)).toMatch(/^AWS4-HMAC-SHA256 /);
  });

  it('still refuses an address whose account is in use', async () => {
    const { fake, identity } = await open();
    await confirmedUser(fake, identity, 'inuse@example.com');
    expect((await domainError(identity.invite('inuse@example.com'))).code).toBe('CONFLICT');
    expect(fake.state.callsTo('AdminDeleteUser')).toEqual([]);
  });
});

describe('cognito: hosted UI and configuration', () => {
  it('publicConfig names the pool, client and hosted UI, never the secret', async () => {
    const { fake, identity } = await open({ clientSecret: 'top-secret-value' });
    const config = identity.publicConfig();
    expect(config).toEqual({
      kind: 'cognito',
      region: fake.state.region,
      user_pool_id: fake.state.userPoolId,
      client_id: fake.state.clientId,
      domain: fake.url,
      authorize_url: `${fake.url}/oauth2/authorize`,
    });
    expect(JSON.stringify(config)).not.toContain('top-secret-value');
    const without = await open({}, { domain: undefined });
    expect(without.identity.publicConfig()).toMatchObject({ domain: null, authorize_url: null });
  });

  it('without COGNITO_DOMAIN the exchange is CONFLICT naming it; without redirect_uri it is INVALID_INPUT', async () => {
    const { identity } = await open({}, { domain: undefined });
    const error = await domainError(identity.exchangeCode({ code: 'x', redirectUri: REDIRECT, codeVerifier: null }));
    expect(error.code).toBe('CONFLICT');
    expect(error.message).toContain('COGNITO_DOMAIN');
    const second = await open();
    const missing = await domainError(second.identity.exchangeCode({ code: 'x', redirectUri: null, codeVerifier: null }));
    expect(missing.problems[0]?.loc).toEqual(['body', 'redirect_uri']);
  });

  it('a code is bound to its PKCE verifier and redirect URI, and single use', async () => {
    const { fake, identity } = await open();
    await confirmedUser(fake, identity, 'pkce@example.com');
    const verifier = randomBytes(32).toString('base64url');
    const code = fake.state.authorize('pkce@example.com', PASSWORD, REDIRECT, codeChallengeOf(verifier));
    const wrongVerifier = await domainError(identity.exchangeCode({ code, redirectUri: REDIRECT, codeVerifier: 'x'.repeat(43) }));
    expect(wrongVerifier.problems[0]?.loc).toEqual(['body', 'code']);
    const wrongRedirect = await domainError(identity.exchangeCode({ code, redirectUri: 'https://evil.example.com/cb', codeVerifier: verifier }));
    expect(wrongRedirect.problems[0]?.loc).toEqual(['body', 'code']);
    const found = await identity.exchangeCode({ code, redirectUri: REDIRECT, codeVerifier: verifier });
    expect(found).toEqual({ provider: 'cognito', subject: fake.state.userByEmail('pkce@example.com')!.sub, email: 'pkce@example.com' });
    const again = await domainError(identity.exchangeCode({ code, redirectUri: REDIRECT, codeVerifier: verifier }));
    expect(again.code).toBe('INVALID_INPUT');
  });

  it('a wrong client secret at the token endpoint is a configuration error', async () => {
    const { fake, identity } = await open({ clientSecret: 'right-secret' }, { clientSecret: 'wrong-secret' });
    fake.state.users.set('x@example.com', {
      sub: 'sub-x', email: 'x@example.com', password: PASSWORD, status: 'CONFIRMED', emailVerified: true, enabled: true, temporaryPasswordExpiresAt: null,
    });
    const code = fake.state.authorize('x@example.com', PASSWORD, REDIRECT, null);
    const error = await rejection(identity.exchangeCode({ code, redirectUri: REDIRECT, codeVerifier: null }));
    expect(error).not.toBeInstanceOf(DomainError);
    expect(error.message).toMatch(/invalid_client.*COGNITO_CLIENT_SECRET/);
  });

  it('invite without AWS credentials fails naming the permission an operator must grant', async () => {
    const { identity } = await open({}, {
      credentials: undefined,
    });
    // no credentials in this process's environment: the default chain finds none (IMDS is not reachable here)
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY, imds: process.env.AWS_EC2_METADATA_DISABLED };
    delete process.env.AWS_ACCESS_KEY_ID;
    delete process.env.AWS_SECRET_ACCESS_KEY;
    process.env.AWS_EC2_METADATA_DISABLED = 'true';
    try {
      const error = await rejection(identity.invite('nocreds@example.com'));
      expect(error).not.toBeInstanceOf(DomainError);
      expect(error.message).toContain('cognito-idp:AdminCreateUser');
    } finally {
      if (saved.id !== undefined) process.env.AWS_ACCESS_KEY_ID = saved.id;
      if (saved.secret !== undefined) process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
      if (saved.imds === undefined) delete process.env.AWS_EC2_METADATA_DISABLED;
      else process.env.AWS_EC2_METADATA_DISABLED = saved.imds;
    }
  });
});
