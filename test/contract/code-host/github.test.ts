import { afterEach, describe, expect, it } from 'vitest';
import { DomainError } from '../../../core/errors.ts';
import type { CodeHost, DevicePoll } from '../../../core/ports/code-host.ts';
import {
  createGithubCodeHost,
  GithubHttpError,
  GithubOAuthError,
  GithubTransportError,
  type GithubCodeHostConfig,
} from '../../../adapters/identity/github/index.ts';
import { startFakeGithub, type FakeGithub, type FakeGithubUser } from '../../fakes/github/server.ts';

const OCTOCAT: FakeGithubUser = { id: 583231, login: 'octocat', email: 'octocat@example.com', emailVerified: true };

describe('github code host against the fake', () => {
  let fake: FakeGithub;
  /** One clock for the fake and the adapter: tests move time instead of sleeping through intervals. */
  let clock: number;
  const later = (seconds: number) => {
    clock += seconds * 1000;
  };

  const open = async (overrides: Partial<GithubCodeHostConfig> = {}): Promise<CodeHost> => {
    clock = 1_700_000_000_000;
    fake = await startFakeGithub({ now: () => clock });
    return createGithubCodeHost({
      clientId: fake.state.clientId,
      githubUrl: fake.githubUrl,
      apiUrl: fake.apiUrl,
      timeoutMs: 2_000,
      retryBaseMs: 1,
      now: () => clock,
      ...overrides,
    });
  };

  afterEach(async () => {
    await fake?.close();
  });

  /** Starts a flow and lets the person approve it as `user`. */
  const approved = async (host: CodeHost, user: FakeGithubUser = OCTOCAT): Promise<string> => {
    const start = await host.startDevice();
    fake.state.approve(start.userCode, user);
    return start.deviceCode;
  };

  const failureOf = async (promise: Promise<unknown>): Promise<Error> => {
    try {
      await promise;
    } catch (error) {
      return error as Error;
    }
    throw new Error('expected a failure');
  };

  describe('start', () => {
    it('asks GitHub for a device code with the client id and the profile and email scopes, in JSON', async () => {
      const host = await open();
      const start = await host.startDevice();
      expect(start).toEqual({
        deviceCode: expect.stringMatching(/^[0-9a-f]{40}$/),
        userCode: expect.stringMatching(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/),
        verificationUri: `${fake.githubUrl}/login/device`,
        expiresIn: 900,
        interval: 5,
      });
      const [sent] = fake.state.requestsTo('POST', '/login/device/code');
      expect(sent?.params).toEqual({ client_id: fake.state.clientId, scope: 'read:user user:email' });
      expect(sent?.headers.accept).toBe('application/json');
      expect(sent?.headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(host.name).toBe('github');
    });

    it('passes on the interval and lifetime GitHub gives', async () => {
      const host = await open();
      fake.state.interval = 8;
      fake.state.expiresIn = 600;
      expect(await host.startDevice()).toMatchObject({ interval: 8, expiresIn: 600 });
    });

    it('an app without device flow enabled throws a configuration error saying what to enable', async () => {
      const host = await open();
      fake.state.deviceFlowEnabled = false;
      const error = await failureOf(host.startDevice());
      expect(error).toBeInstanceOf(GithubOAuthError);
      expect(error).not.toBeInstanceOf(DomainError);
      expect(error.message).toMatch(/device_flow_disabled.*enable "Device Flow".*GITHUB_CLIENT_ID/);
    });

    it('an unknown client id (GitHub: 404) throws naming GITHUB_CLIENT_ID', async () => {
      const host = await open({ clientId: 'Ov23liNoSuchClient00' });
      const error = await failureOf(host.startDevice());
      expect(error).toBeInstanceOf(GithubOAuthError);
      expect(error.message).toMatch(/GITHUB_CLIENT_ID/);
    });
  });

  describe('poll', () => {
    it('answers pending until the person acts, sending the device grant', async () => {
      const host = await open();
      const { deviceCode } = await host.startDevice();
      expect(await host.pollDevice(deviceCode)).toEqual({ status: 'pending' });
      later(5);
      expect(await host.pollDevice(deviceCode)).toEqual({ status: 'pending' });
      const polls = fake.state.requestsTo('POST', '/login/oauth/access_token');
      expect(polls).toHaveLength(2);
      expect(polls[0]?.params).toEqual({
        client_id: fake.state.clientId,
        device_code: deviceCode,
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
      });
      // GitHub's quirk: these errors come with HTTP 200
      expect(polls.map((p) => p.status)).toEqual([200, 200]);
    });

    it('polled inside the interval: slow_down with the interval GitHub raised by 5 s each time, honoured afterwards', async () => {
      const host = await open();
      const { deviceCode } = await host.startDevice();
      expect(await host.pollDevice(deviceCode)).toEqual({ status: 'pending' });
      later(2);
      expect(await host.pollDevice(deviceCode)).toEqual({ status: 'slow_down', interval: 10 });
      later(3);
      expect(await host.pollDevice(deviceCode)).toEqual({ status: 'slow_down', interval: 15 });
      // waiting the new interval is enough again
      later(15);
      expect(await host.pollDevice(deviceCode)).toEqual({ status: 'pending' });
      later(15);
      fake.state.approve(fake.state.devices.get(deviceCode)!.userCode, OCTOCAT);
      expect(await host.pollDevice(deviceCode)).toMatchObject({ status: 'complete' });
    });

    it('slow_down carries GitHub\'s interval, not one computed here (a replica that never saw the start)', async () => {
      const host = await open();
      fake.state.interval = 8;
      const { deviceCode } = await host.startDevice();
      const replica = createGithubCodeHost({ clientId: fake.state.clientId, githubUrl: fake.githubUrl, apiUrl: fake.apiUrl, now: () => clock });
      expect(await replica.pollDevice(deviceCode)).toEqual({ status: 'pending' });
      later(1);
      // 8 + 5 from GitHub; the RFC default (5 + 5) would be wrong
      expect(await replica.pollDevice(deviceCode)).toEqual({ status: 'slow_down', interval: 13 });
    });

    it('approved: the identity is GitHub\'s numeric id with the primary verified address', async () => {
      const host = await open();
      const deviceCode = await approved(host);
      expect(await host.pollDevice(deviceCode)).toEqual({
        status: 'complete',
        // the noreply address is verified and listed first, but not primary
        identity: { provider: 'github', subject: '583231', email: 'octocat@example.com', login: 'octocat' },
      });
      const [user] = fake.state.requestsTo('GET', '/user');
      expect(user?.headers.authorization).toMatch(/^Bearer gho_/);
      expect(user?.headers['x-github-api-version']).toBe('2022-11-28');
      expect(user?.headers.accept).toBe('application/vnd.github+json');
    });

    it('an unverified primary address gives no email', async () => {
      const host = await open();
      const deviceCode = await approved(host, { ...OCTOCAT, emailVerified: false });
      expect(await host.pollDevice(deviceCode)).toEqual({
        status: 'complete',
        identity: { provider: 'github', subject: '583231', email: null, login: 'octocat' },
      });
    });

    it('no primary address at all gives no email, even with verified secondary ones', async () => {
      const host = await open();
      const deviceCode = await approved(host, { ...OCTOCAT, email: null, otherEmails: ['work@example.com'] });
      expect(await host.pollDevice(deviceCode)).toMatchObject({ identity: { subject: '583231', email: null } });
    });

    it('a token that may not read addresses (a GitHub App without the email permission) gives no email', async () => {
      const host = await open();
      fake.state.emailsRefusal = { status: 403, message: 'Resource not accessible by integration' };
      const deviceCode = await approved(host);
      expect(await host.pollDevice(deviceCode)).toEqual({
        status: 'complete',
        identity: { provider: 'github', subject: '583231', email: null, login: 'octocat' },
      });
    });

    it('a rate limit reading the addresses is an outage, not "no email"', async () => {
      const host = await open();
      fake.state.emailsRefusal = { status: 403, message: 'API rate limit exceeded for user ID 583231.' };
      const deviceCode = await approved(host);
      const error = await failureOf(host.pollDevice(deviceCode));
      expect(error).toBeInstanceOf(GithubHttpError);
      expect(error.message).toMatch(/rate limit/);
    });

    it('a renamed login keeps the subject: the id is the key, never the login', async () => {
      const host = await open();
      const first = await host.pollDevice(await approved(host));
      const second = await host.pollDevice(await approved(host, { ...OCTOCAT, login: 'octocat-renamed' }));
      const subjectOf = (poll: DevicePoll) => (poll.status === 'complete' ? poll.identity.subject : null);
      expect(subjectOf(first)).toBe('583231');
      expect(subjectOf(second)).toBe('583231');
      const other = await host.pollDevice(await approved(host, { id: 9_919, login: 'octocat', email: null, emailVerified: false }));
      expect(subjectOf(other)).toBe('9919');
    });

    it('denied by the person: denied, and stays so', async () => {
      const host = await open();
      const start = await host.startDevice();
      fake.state.deny(start.userCode);
      expect(await host.pollDevice(start.deviceCode)).toEqual({ status: 'denied' });
      later(5);
      expect(await host.pollDevice(start.deviceCode)).toEqual({ status: 'denied' });
    });

    it('a code past expires_in is expired', async () => {
      const host = await open();
      const { deviceCode } = await host.startDevice();
      later(900);
      expect(await host.pollDevice(deviceCode)).toEqual({ status: 'expired' });
    });

    it('a code GitHub ended early is expired', async () => {
      const host = await open();
      const start = await host.startDevice();
      fake.state.expire(start.userCode);
      expect(await host.pollDevice(start.deviceCode)).toEqual({ status: 'expired' });
    });

    it('a completed code polled again is expired (GitHub has spent it)', async () => {
      const host = await open();
      const deviceCode = await approved(host);
      expect(await host.pollDevice(deviceCode)).toMatchObject({ status: 'complete' });
      later(5);
      expect(await host.pollDevice(deviceCode)).toEqual({ status: 'expired' });
    });

    it('a device code GitHub never issued is expired', async () => {
      const host = await open();
      expect(await host.pollDevice('0'.repeat(40))).toEqual({ status: 'expired' });
    });

    it('parallel polls of one code make one request to GitHub and share its answer', async () => {
      const host = await open();
      const deviceCode = await approved(host);
      const polls = await Promise.all(Array.from({ length: 5 }, () => host.pollDevice(deviceCode)));
      expect(polls.every((p) => p.status === 'complete' && p.identity.subject === '583231')).toBe(true);
      expect(fake.state.requestsTo('POST', '/login/oauth/access_token')).toHaveLength(1);
    });
  });

  describe('outages', () => {
    it('a 5xx on the token poll throws (not a DomainError), and the next poll carries on', async () => {
      const host = await open();
      const deviceCode = await approved(host);
      fake.state.failNext(1, { status: 502, path: '/login/oauth/access_token' });
      const error = await failureOf(host.pollDevice(deviceCode));
      expect(error).toBeInstanceOf(GithubHttpError);
      expect(error).not.toBeInstanceOf(DomainError);
      expect((error as GithubHttpError).status).toBe(502);
      later(5);
      expect(await host.pollDevice(deviceCode)).toMatchObject({ status: 'complete', identity: { subject: '583231' } });
    });

    it('a 5xx on the device code request throws', async () => {
      const host = await open();
      fake.state.failNext(1, { status: 503, path: '/login/device/code' });
      expect(await failureOf(host.startDevice())).toBeInstanceOf(GithubHttpError);
    });

    it('a brief 5xx reading the person is retried within the poll', async () => {
      const host = await open();
      const deviceCode = await approved(host);
      fake.state.failNext(1, { path: '/user' });
      expect(await host.pollDevice(deviceCode)).toMatchObject({ status: 'complete', identity: { subject: '583231' } });
      expect(fake.state.requestsTo('GET', '/user').map((r) => r.status)).toEqual([502, 200]);
    });

    it('reading the person fails after GitHub spent the code: throws, and the next poll reads with the held token', async () => {
      const host = await open({ retries: 0 });
      const deviceCode = await approved(host);
      fake.state.failNext(1, { status: 500, path: '/user/emails' });
      expect(await failureOf(host.pollDevice(deviceCode))).toBeInstanceOf(GithubHttpError);
      later(5);
      expect(await host.pollDevice(deviceCode)).toEqual({
        status: 'complete',
        identity: { provider: 'github', subject: '583231', email: 'octocat@example.com', login: 'octocat' },
      });
      // no second token request: GitHub would have answered incorrect_device_code
      expect(fake.state.requestsTo('POST', '/login/oauth/access_token')).toHaveLength(1);
    });

    it('no answer within the timeout throws a transport error', async () => {
      const host = await open({ timeoutMs: 200 });
      const { deviceCode } = await host.startDevice();
      fake.state.hangNext(1, '/login/oauth/access_token');
      const error = await failureOf(host.pollDevice(deviceCode));
      expect(error).toBeInstanceOf(GithubTransportError);
      expect((error as GithubTransportError).reason).toBe('timeout');
    });

    it('nothing listening throws a transport error', async () => {
      const host = await open();
      await fake.close();
      const error = await failureOf(host.startDevice());
      expect(error).toBeInstanceOf(GithubTransportError);
      expect((error as GithubTransportError).reason).toBe('network');
    });
  });
});
