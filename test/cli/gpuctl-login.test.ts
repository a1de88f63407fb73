import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../adapters/clock/manual-clock.ts';
import { startFakeGithub, type FakeGithub } from '../fakes/github/server.ts';
import { startApi, type TestApi } from '../support/api.ts';
import { startSmtpInbox, type ReceivedMail, type SmtpInbox } from '../support/smtp-inbox.ts';
import { gpuctl, until, type Gpuctl } from './run-gpuctl.ts';

/**
 * gpuctl's sign-in against the real server on PostgreSQL: GitHub's device flow on its fake (the code printed,
 * approved in the "browser", the session saved), email and password, an API token; the profile file and its
 * mode; logout revoking the session; which token goes to which URL.
 */
// each test runs gpuctl several times as a process of its own: seconds each on a loaded machine
vi.setConfig({ testTimeout: 120_000 });

const PASSWORD = 'Correct-Horse-Battery-9';
const CLIENT_ID = 'Iv1.test0123456789ab';

let api: TestApi;
let github: FakeGithub;
let inbox: SmtpInbox;
let seq = 0;

beforeAll(async () => {
  inbox = await startSmtpInbox();
  // real time on both sides: gpuctl waits the interval GitHub gives between polls
  github = await startFakeGithub({ clientId: CLIENT_ID });
  github.state.interval = 1;
  api = await startApi(
    { auth: { mail: { smtpUrl: inbox.url, from: 'gpu-control-plane <no-reply@cp.test>' }, github: { clientId: CLIENT_ID, githubUrl: github.githubUrl, apiUrl: github.apiUrl } } },
    { clock: new ManualClock(new Date(Math.floor(Date.now() / 1000) * 1000)) },
  );
});
afterAll(async () => {
  await api?.close();
  await github?.close();
  await inbox?.close();
});

const profileFile = (cli: Gpuctl) => join(cli.configHome, 'gpuctl', 'config.json');
const readProfiles = (cli: Gpuctl) => JSON.parse(readFileSync(profileFile(cli), 'utf8')) as { current: string; profiles: Record<string, { url: string; token: string; tenant_id: string; expires_at: string | null }> };
const self = (token: string) => api.call('GET', '/v1/tokens/self', { token });

async function confirmedAccount(): Promise<string> {
  const email = `cli.${Date.now().toString(36)}${seq++}@example.com`;
  expect((await api.call('POST', '/v1/auth/sign-up', { body: { email, password: PASSWORD } })).status).toBe(200);
  const mail = await inbox.next((m: ReceivedMail) => m.to.includes(email) && /confirmation/.test(m.subject), 10_000);
  const code = /\b(\d{6})\b/.exec(mail.text)![1]!;
  expect((await api.call('POST', '/v1/auth/confirm-email', { body: { email, code } })).status).toBe(200);
  return email;
}

/** Starts `gpuctl login` by device flow and answers the code it prints, as a person at GitHub would. */
async function deviceLogin(cli: Gpuctl, decide: (userCode: string) => void, args: string[] = []) {
  const login = cli.start(['login', '--url', api.baseUrl, ...args]);
  login.child.stdin!.end();
  let userCode = '';
  await until('the code to be printed', () => {
    const printed = /^Open (\S+) and enter the code (\S+)$/m.exec(login.output().stderr);
    if (printed) {
      expect(printed[1]).toBe(`${github.githubUrl}/login/device`);
      userCode = printed[2]!;
    }
    return Boolean(printed);
  });
  decide(userCode);
  return login.done;
}

describe('device flow', () => {
  it('prints the verification URL and code, waits for the approval, saves URL and session in a 0600 profile', async () => {
    const cli = gpuctl();
    const run = await deviceLogin(cli, (code) => github.state.approve(code, { id: 91_001, login: 'octo', email: 'octo@example.com', emailVerified: true }));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^Signed in to ${api.baseUrl} \\(tenant ten_[a-z0-9]+, expires in 29d 23h\\); profile "default" saved in ${profileFile(cli)}\\n$`));

    expect(statSync(profileFile(cli)).mode & 0o777).toBe(0o600);
    expect(statSync(join(cli.configHome, 'gpuctl')).mode & 0o777).toBe(0o700);
    const saved = readProfiles(cli);
    expect(saved.current).toBe('default');
    expect(saved.profiles.default).toMatchObject({ url: api.baseUrl, tenant_id: expect.stringMatching(/^ten_/) });
    const session = (await self(saved.profiles.default!.token)).body;
    expect(session).toMatchObject({ kind: 'session', tenant_id: saved.profiles.default!.tenant_id });

    // the next command finds the profile by itself
    const whoami = await cli.run(['whoami']);
    expect(whoami.code, whoami.stderr).toBe(0);
    expect(whoami.stdout).toMatch(new RegExp(`^tenant:\\s+${session.tenant_id}$`, 'm'));
    expect(whoami.stdout).toMatch(/^from:\s+profile default$/m);
    expect(json((await cli.run(['whoami', '--json'])).stdout)).toEqual((await self(saved.profiles.default!.token)).body);

    // logout revokes the session and forgets it
    const logout = await cli.run(['logout']);
    expect(logout.code, logout.stderr).toBe(0);
    expect(logout.stdout).toContain('session revoked');
    expect((await self(saved.profiles.default!.token)).status).toBe(401);
    expect(readProfiles(cli).profiles).toEqual({});
    const after = await cli.run(['whoami']);
    expect(after.code).toBe(3);
    expect(after.stderr).toContain('gpuctl login');
  });

  it('--tenant: a person of several tenants lands in the one asked for (the device flow takes none: a switch, the first session revoked)', async () => {
    const cli = gpuctl();
    const octo = { id: 91_002, login: 'octo2', email: `octo2.${Date.now().toString(36)}@example.com`, emailVerified: true };
    const first = await deviceLogin(cli, (code) => github.state.approve(code, octo));
    expect(first.code, first.stderr).toBe(0);
    const own = readProfiles(cli).profiles.default!;

    // an owner of another tenant invites the GitHub person's address; their session accepts
    const boss = await confirmedAccount();
    const bossSession = (await api.call('POST', '/v1/auth/sign-in', { body: { email: boss, password: PASSWORD } })).body;
    expect((await api.call('POST', '/v1/invitations', { token: bossSession.token, body: { email: octo.email, role: 'viewer' } })).status).toBe(201);
    const mail = await inbox.next((m: ReceivedMail) => m.to.includes(octo.email) && /invited/.test(m.subject), 10_000);
    const code = /Invitation code: (\S+)/.exec(mail.text)![1]!;
    expect((await api.call('POST', '/v1/invitations/accept', { token: own.token, body: { code } })).status).toBe(200);

    const before = (await api.call('GET', '/v1/tokens', { token: own.token })).body as { kind: string; revoked_at: string | null }[];
    const there = await deviceLogin(cli, (code) => github.state.approve(code, octo), ['--tenant', bossSession.tenant_id]);
    expect(there.code, there.stderr).toBe(0);
    const saved = readProfiles(cli).profiles.default!;
    expect(saved.tenant_id).toBe(bossSession.tenant_id);
    expect((await self(saved.token)).body).toMatchObject({ kind: 'session', tenant_id: bossSession.tenant_id, role: 'viewer' });
    // the session the device flow made in their own tenant on the way was revoked; the first login's stays
    const after = (await api.call('GET', '/v1/tokens', { token: own.token })).body as { kind: string; revoked_at: string | null }[];
    const revokedSessions = (list: typeof after) => list.filter((t) => t.kind === 'session' && t.revoked_at !== null).length;
    expect(revokedSessions(after)).toBe(revokedSessions(before) + 1);
    expect((await self(own.token)).status).toBe(200);
  });

  it('denied at GitHub: exit 3, no profile written', async () => {
    const cli = gpuctl();
    const run = await deviceLogin(cli, (code) => github.state.deny(code));
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('denied');
    expect(() => statSync(profileFile(cli))).toThrow();
  });
});

const json = (stdout: string) => JSON.parse(stdout) as unknown;

describe('email and tokens', () => {
  it('a server without GitHub sign-in: exit 6 with its detail and what else works', async () => {
    const bare = await startApi();
    try {
      const run = await gpuctl().run(['login', '--url', bare.baseUrl]);
      expect(run.code).toBe(6);
      expect(run.stderr).toMatch(/^error: .*GITHUB_CLIENT_ID.*\nSign in with --email, or save an API token with --token\.\n$/s);
    } finally {
      await bare.close();
    }
  });


  it('--email with --password or the password on stdin; a wrong password exits 3 with the API detail', async () => {
    const email = await confirmedAccount();
    const cli = gpuctl();
    const wrong = await cli.run(['login', '--url', api.baseUrl, '--email', email, '--password', 'not-it-at-all']);
    expect(wrong.code).toBe(3);
    const detail = (await api.call('POST', '/v1/auth/sign-in', { body: { email, password: 'not-it-at-all' } })).body.detail as string;
    expect(wrong.stderr).toBe(`error: ${detail}\n`);

    const byFlag = await cli.run(['login', '--url', api.baseUrl, '--email', email, '--password', PASSWORD, '--profile', 'work']);
    expect(byFlag.code, byFlag.stderr).toBe(0);
    // a login writes the current profile (work, now) unless told another
    const piped = await cli.run(['login', '--url', api.baseUrl, '--email', email], { input: `${PASSWORD}\n`, env: { GPUCTL_PROFILE: 'default' } });
    expect(piped.code, piped.stderr).toBe(0);
    const saved = readProfiles(cli);
    expect(Object.keys(saved.profiles).sort()).toEqual(['default', 'work']);
    expect(saved.current).toBe('default');
    expect(saved.profiles.work!.tenant_id).toBe(saved.profiles.default!.tenant_id);
    expect((await self(saved.profiles.work!.token)).body.kind).toBe('session');
    expect(statSync(profileFile(cli)).mode & 0o777).toBe(0o600);

    // --profile picks one; GPUCTL_PROFILE too; else the one signed in last
    expect((await cli.run(['whoami', '--profile', 'work'])).stdout).toMatch(/^from:\s+profile work$/m);
    expect((await cli.run(['whoami'], { env: { GPUCTL_PROFILE: 'work' } })).stdout).toMatch(/^from:\s+profile work$/m);
    expect((await cli.run(['whoami'])).stdout).toMatch(/^from:\s+profile default$/m);
  });

  it('--token saves an API token (logout forgets it without revoking it); a token is never sent to another URL', async () => {
    const tenant = await api.newTenant('tokens');
    const cli = gpuctl();
    // an older file with loose bits is tightened on the next write
    const dir = join(cli.configHome, 'gpuctl');
    mkdirSync(dir, { recursive: true });
    writeFileSync(profileFile(cli), JSON.stringify({ current: 'default', profiles: {} }), { mode: 0o644 });
    const saved = await cli.run(['login', '--url', api.baseUrl, '--token', tenant.token]);
    expect(saved.code, saved.stderr).toBe(0);
    expect(statSync(profileFile(cli)).mode & 0o777).toBe(0o600);
    expect((await cli.run(['whoami'])).stdout).toMatch(new RegExp(`^token:\\s+${tenant.tokenId} \\(api\\)$`, 'm'));

    const elsewhere = await cli.run(['whoami'], { env: { GPUCTL_URL: 'http://127.0.0.1:9' } });
    expect(elsewhere.code).toBe(3);
    expect(elsewhere.stderr).toContain('not signed in to http://127.0.0.1:9');

    const bad = await cli.run(['login', '--url', api.baseUrl, '--token', 'gcp_tok_wrong']);
    expect(bad.code).toBe(3);

    const logout = await cli.run(['logout']);
    expect(logout.code).toBe(0);
    expect(logout.stdout).not.toContain('revoked');
    expect((await self(tenant.token)).status).toBe(200);
  });
});
