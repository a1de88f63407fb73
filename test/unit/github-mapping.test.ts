import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  GithubOAuthError,
  primaryVerifiedEmail,
  readTokenAnswer,
  toDeviceStart,
  toIdentity,
  userSchema,
} from '../../adapters/identity/github/mapping.ts';

const ok = (body: Record<string, unknown>) => ({ status: 200, body });

const thrown = (fn: () => unknown): GithubOAuthError => {
  try {
    fn();
  } catch (error) {
    if (error instanceof GithubOAuthError) return error;
    throw error;
  }
  throw new Error('expected a GithubOAuthError');
};

describe('github mapping: device code', () => {
  it('reads GitHub\'s documented answer', () => {
    expect(
      toDeviceStart(
        ok({
          device_code: '3584d83530557fdd1f46af8289938c8ef79f9dc5',
          user_code: 'WDJB-MJHT',
          verification_uri: 'https://github.com/login/device',
          expires_in: 900,
          interval: 5,
        }),
      ),
    ).toEqual({
      deviceCode: '3584d83530557fdd1f46af8289938c8ef79f9dc5',
      userCode: 'WDJB-MJHT',
      verificationUri: 'https://github.com/login/device',
      expiresIn: 900,
      interval: 5,
    });
  });

  it('takes numbers sent as strings, and the RFC default interval of 5 when none is sent', () => {
    const start = toDeviceStart(ok({ device_code: 'd', user_code: 'U', verification_uri: 'v', expires_in: '600' }));
    expect(start).toMatchObject({ expiresIn: 600, interval: 5 });
  });

  it('device_flow_disabled and an unknown client say what the operator must fix', () => {
    expect(thrown(() => toDeviceStart({ status: 400, body: { error: 'device_flow_disabled' } })).message).toMatch(/Device Flow.*GITHUB_CLIENT_ID/);
    expect(thrown(() => toDeviceStart({ status: 404, body: { error: 'Not Found' } })).message).toMatch(/check GITHUB_CLIENT_ID/);
  });

  it('an answer without the fields is refused, not half-read', () => {
    expect(thrown(() => toDeviceStart(ok({ device_code: 'd', user_code: 'U' }))).code).toBe('unreadable');
    expect(thrown(() => toDeviceStart(ok({ device_code: 'd', user_code: 'U', verification_uri: 'v', expires_in: 0 }))).code).toBe('unreadable');
  });
});

describe('github mapping: token poll', () => {
  it('maps each documented device flow error (all sent with HTTP 200)', () => {
    expect(readTokenAnswer(ok({ error: 'authorization_pending' }), 5)).toEqual({ status: 'pending' });
    expect(readTokenAnswer(ok({ error: 'access_denied' }), 5)).toEqual({ status: 'denied' });
    expect(readTokenAnswer(ok({ error: 'expired_token' }), 5)).toEqual({ status: 'expired' });
    // the docs' prose calls it token_expired
    expect(readTokenAnswer(ok({ error: 'token_expired' }), 5)).toEqual({ status: 'expired' });
    expect(readTokenAnswer(ok({ error: 'incorrect_device_code' }), 5)).toEqual({ status: 'expired' });
  });

  it('errors no poller can act on are configuration faults, thrown with what to check', () => {
    expect(thrown(() => readTokenAnswer(ok({ error: 'incorrect_client_credentials' }), 5)).message).toMatch(/GITHUB_CLIENT_ID/);
    expect(thrown(() => readTokenAnswer(ok({ error: 'device_flow_disabled' }), 5)).message).toMatch(/Device Flow/);
    expect(thrown(() => readTokenAnswer(ok({ error: 'unsupported_grant_type' }), 5)).code).toBe('unsupported_grant_type');
    expect(thrown(() => readTokenAnswer(ok({ error: 'something_new', error_description: 'Why.' }), 5)).message).toMatch(/something_new \(Why\.\)/);
    expect(thrown(() => readTokenAnswer(ok({}), 5)).code).toBe('unreadable');
  });

  it('slow_down passes on the interval GitHub sends, as a number or a string', () => {
    expect(readTokenAnswer(ok({ error: 'slow_down', interval: 22 }), 5)).toEqual({ status: 'slow_down', interval: 22 });
    expect(readTokenAnswer(ok({ error: 'slow_down', interval: '33' }), 5)).toEqual({ status: 'slow_down', interval: 33 });
  });

  it('slow_down without a usable interval adds RFC 8628\'s 5 seconds to the last one', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3_600 }), fc.constantFrom(undefined, null, 0, -3, 'soon', 2.5), (last, sent) => {
        expect(readTokenAnswer(ok({ error: 'slow_down', interval: sent }), last)).toEqual({ status: 'slow_down', interval: last + 5 });
      }),
    );
  });

  it('an access token wins over anything else in the body', () => {
    expect(readTokenAnswer(ok({ access_token: 'gho_abc', token_type: 'bearer', scope: 'read:user,user:email' }), 5)).toEqual({ accessToken: 'gho_abc' });
    expect(readTokenAnswer(ok({ access_token: '', error: 'authorization_pending' }), 5)).toEqual({ status: 'pending' });
  });
});

describe('github mapping: the person', () => {
  it('the subject is the numeric id as text, whatever the login', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), fc.string(), (id, login) => {
        const user = userSchema.parse({ id, login, type: 'User' });
        expect(toIdentity(user, null)).toEqual({ provider: 'github', subject: String(id), email: null, login });
      }),
    );
  });

  it('refuses an id that is not a positive safe integer (text would not be exact)', () => {
    for (const id of [0, -1, 1.5, 2 ** 53, '583231', null]) expect(userSchema.safeParse({ id, login: 'octocat' }).success).toBe(false);
  });

  it('only the primary address counts, and only when verified', () => {
    const noreply = { email: '1+me@users.noreply.github.com', primary: false, verified: true };
    expect(primaryVerifiedEmail([noreply, { email: 'me@example.com', primary: true, verified: true }])).toBe('me@example.com');
    expect(primaryVerifiedEmail([noreply, { email: 'me@example.com', primary: true, verified: false }])).toBeNull();
    expect(primaryVerifiedEmail([noreply])).toBeNull();
    expect(primaryVerifiedEmail([])).toBeNull();
  });
});
