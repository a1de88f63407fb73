import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configFromEnv } from '../../hosts/composition/config.ts';
import { pkcePair } from '../contract/identity-contract.ts';
import { startFakeCognito, type FakeCognito } from '../fakes/cognito/server.ts';
import { startApi, type TestApi } from '../support/api.ts';

/** A deployment that runs an Amazon Cognito user pool plugs it in with COGNITO_* (here: on Cognito's local fake). */
let cognito: FakeCognito;
let api: TestApi;
const PASSWORD = 'Correct-Horse-Battery-9';

beforeAll(async () => {
  cognito = await startFakeCognito({ clientSecret: 'Zq4' + 'y'.repeat(48) });
  const env = configFromEnv({
    COGNITO_REGION: cognito.state.region,
    COGNITO_USER_POOL_ID: cognito.state.userPoolId,
    COGNITO_CLIENT_ID: cognito.state.clientId,
    COGNITO_CLIENT_SECRET: cognito.state.clientSecret!,
    COGNITO_DOMAIN: cognito.url,
    COGNITO_ENDPOINT: cognito.url,
  });
  // AdminGetUser (who reset the password) is signed: the SDK's default chain would find none in a test
  api = await startApi({ auth: { ...env.auth!, cognito: { ...env.auth!.cognito!, credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'fake-secret' } } } });
});
afterAll(async () => {
  await api?.close();
  await cognito?.close();
});

const post = (path: string, body: unknown, token?: string) => api.call('POST', path, { body, ...(token && { token }) });

describe('sign-in with Amazon Cognito', () => {
  it('replaces the built-in provider: /v1/auth/config names it (no secret), and there is no built-in sign-in page', async () => {
    const config = (await api.call('GET', '/v1/auth/config')).body;
    expect(config.idp).toMatchObject({ kind: 'cognito', user_pool_id: cognito.state.userPoolId, client_id: cognito.state.clientId, authorize_url: `${cognito.url}/oauth2/authorize` });
    expect(JSON.stringify(config)).not.toContain(cognito.state.clientSecret!);
    expect((await api.call('GET', '/auth/authorize')).status).toBe(404);
  });

  it('sign up, confirm, sign in and the hosted UI code exchange end in console sessions of one tenant', async () => {
    const email = `pool.${Date.now().toString(36)}@example.com`;
    expect((await post('/v1/auth/sign-up', { email, password: PASSWORD })).body.status).toBe('code_sent');
    expect((await post('/v1/auth/sign-in', { email, password: PASSWORD })).status).toBe(409);
    const code = cognito.state.lastCode(email, 'confirm')!;
    expect((await post('/v1/auth/confirm-email', { email, code })).body).toEqual({ status: 'confirmed' });
    const signedIn = await post('/v1/auth/sign-in', { email, password: PASSWORD });
    expect(signedIn.body).toMatchObject({ status: 'signed_in', token: expect.stringMatching(/^gcp_/), tenant_id: expect.stringMatching(/^ten_/) });

    const { verifier, challenge } = pkcePair();
    const redirect = 'http://127.0.0.1:8765/callback';
    const authorizationCode = cognito.state.authorize(email, PASSWORD, redirect, challenge);
    const exchanged = await post('/v1/auth/idp/exchange', { code: authorizationCode, redirect_uri: redirect, code_verifier: verifier });
    expect(exchanged.status).toBe(200);
    expect(exchanged.body.tenant_id).toBe(signedIn.body.tenant_id);
  });

  it('a password reset ends the person\'s console sessions (the user named by AdminGetUser); a new sign-in works', async () => {
    const email = `reset.${Date.now().toString(36)}@example.com`;
    await post('/v1/auth/sign-up', { email, password: PASSWORD });
    await post('/v1/auth/confirm-email', { email, code: cognito.state.lastCode(email, 'confirm')! });
    const sessions = [(await post('/v1/auth/sign-in', { email, password: PASSWORD })).body.token, (await post('/v1/auth/sign-in', { email, password: PASSWORD })).body.token] as string[];
    const self = (token: string) => api.call('GET', '/v1/tokens/self', { token }).then((r) => r.status);
    expect(await Promise.all(sessions.map(self))).toEqual([200, 200]);
    expect((await post('/v1/auth/forgot-password', { email })).status).toBe(200);
    const reset = await post('/v1/auth/reset-password', { email, code: cognito.state.lastCode(email, 'reset')!, new_password: 'Reset-Horse-Battery-7' });
    expect(reset.body).toEqual({ status: 'password_reset' });
    expect(await Promise.all(sessions.map(self))).toEqual([401, 401]);
    const again = await post('/v1/auth/sign-in', { email, password: 'Reset-Horse-Battery-7' });
    expect(again.status).toBe(200);
    expect(await self(again.body.token)).toBe(200);
  });

  it('an unreachable pool is a 503, not a 500', async () => {
    const email = `down.${Date.now().toString(36)}@example.com`;
    const closed = await startApi({ auth: { cognito: { region: 'eu-west-1', userPoolId: 'eu-west-1_Down0000', clientId: 'client123456789', endpoint: 'http://127.0.0.1:9', timeoutMs: 1_000, maxAttempts: 1 } } });
    try {
      const res = await closed.call('POST', '/v1/auth/sign-in', { body: { email, password: PASSWORD } });
      expect(res.status).toBe(503);
    } finally {
      await closed.close();
    }
  });
});
