import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../adapters/clock/manual-clock.ts';
import { startApi, type TestApi } from '../support/api.ts';
import { startSmtpInbox, type ReceivedMail, type SmtpInbox } from '../support/smtp-inbox.ts';
import { gpuctl, type Gpuctl } from './run-gpuctl.ts';

/**
 * gpuctl for people with roles (docs/sign-in.md, "Roles", "Invitations", "Several tenants") against the real server
 * on PostgreSQL with mail through a real SMTP server: an owner invites, the invitee accepts with their own signed-in
 * session, switches tenant and signs in to either, the owner changes their role and limits and removes them; what a
 * credential that is not root, and the last owner, are told.
 */
// each test runs gpuctl several times as a process of its own: seconds each on a loaded machine
vi.setConfig({ testTimeout: 120_000 });

const PASSWORD = 'Correct-Horse-Battery-9';
/** A moment of this test in gpuctl's words: the server's clock stands still while real time passes. */
const AGO = '(just now|\\d+[smh]( \\d+[sm])? ago)';

let api: TestApi;
let inbox: SmtpInbox;
let seq = 0;

beforeAll(async () => {
  inbox = await startSmtpInbox();
  // the server's clock starts at the real time: gpuctl shows times relative to its own clock
  api = await startApi({ auth: { mail: { smtpUrl: inbox.url, from: 'gpu-control-plane <no-reply@cp.test>' } } }, { clock: new ManualClock(new Date(Math.floor(Date.now() / 1000) * 1000)) });
});
afterAll(async () => {
  await api?.close();
  await inbox?.close();
});

const json = (stdout: string) => JSON.parse(stdout) as any;
const call = (method: string, path: string, token?: string, body?: unknown) => api.call(method, path, { ...(token && { token }), ...(body !== undefined && { body }) });
const handedOut = new Set<ReceivedMail>();
async function mailTo(to: string, subject: RegExp): Promise<ReceivedMail> {
  const mail = await inbox.next((m: ReceivedMail) => !handedOut.has(m) && m.to.includes(to) && subject.test(m.subject), 15_000);
  handedOut.add(mail);
  return mail;
}

/** A confirmed account, signed in with gpuctl in a config home of its own (its first sign-in made its tenant). */
async function person(name: string): Promise<{ email: string; cli: Gpuctl; tenantId: string; token: () => string }> {
  const email = `${name}.${Date.now().toString(36)}${seq++}@example.com`;
  expect((await call('POST', '/v1/auth/sign-up', undefined, { email, password: PASSWORD })).status).toBe(200);
  const code = /\b(\d{6})\b/.exec((await mailTo(email, /confirmation/)).text)![1]!;
  expect((await call('POST', '/v1/auth/confirm-email', undefined, { email, code })).status).toBe(200);
  const cli = gpuctl();
  const login = await cli.run(['login', '--url', api.baseUrl, '--email', email, '--password', PASSWORD]);
  expect(login.code, login.stderr).toBe(0);
  const token = () => profiles(cli).profiles[profiles(cli).current]!.token;
  return { email, cli, tenantId: profiles(cli).profiles.default!.tenant_id, token };
}
const profiles = (cli: Gpuctl) =>
  JSON.parse(readFileSync(join(cli.configHome, 'gpuctl', 'config.json'), 'utf8')) as { current: string; profiles: Record<string, { url: string; token: string; tenant_id: string }> };
const codeIn = async (email: string) => /Invitation code: (\S+)/.exec((await mailTo(email, /invited/)).text)![1]!;

type Person = Awaited<ReturnType<typeof person>>;

// the first three tests are one story: an owner, a colleague they invite, and a second sign-in of the colleague
describe('gpuctl people and tenants', () => {
  let boss: Person;
  let colleague: Person;
  let direct: Gpuctl;

  it('an owner (root) invites a member with limits: the code by mail only; the invitee accepts it with their own session', async () => {
    boss = await person('boss');
    const whoami = await boss.cli.run(['whoami']);
    expect(whoami.stdout).toMatch(/^role:\s+owner$/m);
    expect(whoami.stdout).toMatch(/^root:\s+yes: may change people, invite and write the budget$/m);

    colleague = await person('colleague');
    const invited = await boss.cli.run(['people', 'invite', colleague.email, '--role', 'member', '--spend-limit', '5', '--max-hours', '4']);
    expect(invited.code, invited.stderr).toBe(0);
    expect(invited.stdout).toMatch(new RegExp(`^Invited ${colleague.email.replace(/\./g, '\\.')} as member \\(spend limit \\$5\\.00, rentals up to 4 h\\) \\(inv_[a-z0-9]+\\): the code was mailed to .*, valid until .* \\(in 6d 23h\\)\\n$`));
    expect(invited.stdout).not.toContain('gcpinv_');
    const code = await codeIn(colleague.email);
    const pending = await boss.cli.run(['people', 'invitations']);
    expect(pending.stdout).toMatch(new RegExp(`^inv_\\S+\\s+${colleague.email.replace(/\./g, '\\.')}\\s+member\\s+\\$5\\.00\\s+4\\s+pending\\s+yes\\s+in 6d 23h\\s+${AGO}$`, 'm'));
    expect(json((await boss.cli.run(['people', 'invitations', '--json'])).stdout)).toEqual((await call('GET', '/v1/invitations', boss.token())).body);

    // the invitee accepts with their own signed-in session; a wrong code is 404 (exit 4)
    expect((await colleague.cli.run(['people', 'accept', 'gcpinv_madeup0000000000000000'])).code).toBe(4);
    const accepted = await colleague.cli.run(['people', 'accept', code]);
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(accepted.stdout).toBe(`Joined tenant ${boss.tenantId} as member. Work there: gpuctl tenants switch ${boss.tenantId}\n`);
  });

  it('the invitee lists their tenants, switches (the profile takes the new session) or signs in straight to one; as a member they are not root', async () => {
    const tenants = await colleague.cli.run(['tenants', 'ls']);
    expect(tenants.stdout).toMatch(new RegExp(`^\\*\\s+${colleague.tenantId}\\s+.*\\s+owner$`, 'm'));
    expect(tenants.stdout).toMatch(new RegExp(`^-\\s+${boss.tenantId}\\s+.*\\s+member$`, 'm'));
    const before = colleague.token();
    const switched = await colleague.cli.run(['tenants', 'switch', boss.tenantId]);
    expect(switched.code, switched.stderr).toBe(0);
    expect(switched.stdout).toMatch(new RegExp(`^Switched to tenant ${boss.tenantId} \\(session expires in 29d 23h\\); profile "default" saved in `));
    expect(profiles(colleague.cli).profiles.default).toMatchObject({ url: api.baseUrl, tenant_id: boss.tenantId });
    // the session left behind stays valid (tokens it issued hang from it)
    expect((await call('GET', '/v1/tokens/self', before)).status).toBe(200);
    const member = await colleague.cli.run(['whoami']);
    expect(member.stdout).toMatch(new RegExp(`^tenant:\\s+${boss.tenantId}$`, 'm'));
    expect(member.stdout).toMatch(/^role:\s+member$/m);
    expect(member.stdout).toMatch(/^root:\s+no$/m);
    expect(member.stdout).toMatch(/^remaining:\s+\$5\.00$/m);
    expect((await colleague.cli.run(['tenants', 'ls'])).stdout).toMatch(new RegExp(`^\\*\\s+${boss.tenantId}\\s`, 'm'));
    // a tenant of which they are no person: 404
    expect((await colleague.cli.run(['tenants', 'switch', 'ten_notmine000000000000'])).code).toBe(4);

    // a member is not root: inviting and changing people answer 403 (exit 3) with the API's detail
    const refused = await colleague.cli.run(['people', 'invite', 'someone@example.com', '--role', 'viewer']);
    expect(refused.code).toBe(3);
    const detail = (await call('POST', '/v1/invitations', colleague.token(), { email: 'someone@example.com', role: 'viewer' })).body.detail as string;
    expect(refused.stderr).toBe(`error: ${detail}\n`);

    // login --tenant: straight into the tenant asked for
    direct = gpuctl();
    const login = await direct.run(['login', '--url', api.baseUrl, '--email', colleague.email, '--password', PASSWORD, '--tenant', boss.tenantId]);
    expect(login.code, login.stderr).toBe(0);
    expect(profiles(direct).profiles.default!.tenant_id).toBe(boss.tenantId);
    expect((await direct.run(['login', '--url', api.baseUrl, '--email', colleague.email, '--password', PASSWORD, '--tenant', 'ten_notmine000000000000'])).code).toBe(4);
    expect((await direct.run(['login', '--url', api.baseUrl, '--token', 'gcp_tok_x', '--tenant', boss.tenantId])).code).toBe(2);
  });

  it('the owner sees their role, limits and who linked them, changes role and limits at once, cannot remove the last owner, removes the member', async () => {
    // the owner sees them with role, limits and what linked them
    const people = await boss.cli.run(['people', 'ls']);
    expect(people.code, people.stderr).toBe(0);
    const row = people.stdout.split('\n').find((line) => line.includes(colleague.email))!;
    expect(row).toMatch(/^idn_\S+\s+\S+\s+builtin\s+member\s+\$5\.00\s+4\s+(just now|\d+[smh]( \d+[sm])? ago)\s+tok_\S+ \(a session\)$/);
    expect(people.stdout.split('\n').find((line) => line.includes(boss.email))).toMatch(/\s+owner\s+-\s+-\s+.*\s+own sign-up or operator$/);
    const listed = (await call('GET', '/v1/identities', boss.token())).body;
    expect(json((await boss.cli.run(['people', 'ls', '--json'])).stdout)).toEqual(listed);
    const id = row.split(/\s+/)[0]!;

    // role and limits change at once for their session
    const raised = await boss.cli.run(['people', 'set-role', id, 'member', '--spend-limit', '10', '--max-hours', 'none']);
    expect(raised.code, raised.stderr).toBe(0);
    expect(raised.stdout).toBe(`${colleague.email} (${id}) is now member (spend limit $10.00, no rental length limit)\n`);
    expect((await call('GET', '/v1/tokens/self', colleague.token())).body).toMatchObject({ role: 'member', remaining_cents: 1000, effective_max_rental_hours: null });
    const admin = await boss.cli.run(['people', 'set-role', id, 'admin', '--json']);
    expect(admin.code, admin.stderr).toBe(0);
    expect(json(admin.stdout)).toMatchObject({ id, role: 'admin', spend_limit_cents: null, max_rental_hours: null });
    expect((await colleague.cli.run(['whoami'])).stdout).toMatch(/^root:\s+yes/m);
    // limits belong to members only: the API's 422 (exit 8)
    const limited = await boss.cli.run(['people', 'set-role', id, 'viewer', '--spend-limit', '3']);
    expect(limited.code).toBe(8);
    // bad values never reach the API: exit 2
    expect((await boss.cli.run(['people', 'set-role', id, 'boss'])).code).toBe(2);
    expect((await boss.cli.run(['people', 'set-role', id, 'member', '--max-hours', 'many'])).code).toBe(2);
    expect((await boss.cli.run(['people', 'invite', colleague.email])).code).toBe(2);

    // the last owner cannot be removed (409, exit 6); the colleague can
    const ownerId = listed.find((p: { email: string }) => p.email === boss.email).id as string;
    const last = await boss.cli.run(['people', 'rm', ownerId]);
    expect(last.code).toBe(6);
    expect(last.stderr).toMatch(/^error: .*last owner/);
    const removed = await boss.cli.run(['people', 'rm', id]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toBe(`Removed ${id}: their sessions in this tenant ended, with every token under them\n`);
    expect((await colleague.cli.run(['whoami'])).code).toBe(3);
    expect((await call('GET', '/v1/tokens/self', profiles(direct).profiles.default!.token)).status).toBe(401);
  });

  it('revokes a pending invitation (its code stops working); an accepted one is a conflict; an API token has no tenants to list', async () => {
    const boss = await person('inviter');
    const invitee = await person('invitee');
    const invited = json((await boss.cli.run(['people', 'invite', invitee.email, '--role', 'viewer', '--json'])).stdout);
    expect(invited).toMatchObject({ email: invitee.email, role: 'viewer', status: 'pending', mailed: true });
    const code = await codeIn(invitee.email);
    const revoked = await boss.cli.run(['people', 'revoke-invitation', invited.id]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toBe(`Revoked ${invited.id}: its code no longer works\n`);
    expect((await boss.cli.run(['people', 'invitations'])).stdout).toMatch(new RegExp(`^${invited.id}\\s+\\S+\\s+viewer\\s+-\\s+-\\s+revoked\\s+yes\\s+-\\s+${AGO}$`, 'm'));
    expect((await invitee.cli.run(['people', 'accept', code])).code).toBe(4);

    const again = json((await boss.cli.run(['people', 'invite', invitee.email, '--role', 'billing', '--json'])).stdout);
    expect((await invitee.cli.run(['people', 'accept', await codeIn(invitee.email), '--json'])).stdout).toBe(`${JSON.stringify({ tenant_id: boss.tenantId, role: 'billing' }, null, 2)}\n`);
    const late = await boss.cli.run(['people', 'revoke-invitation', again.id]);
    expect(late.code).toBe(6);

    // an API token: no person behind it, so no tenants (403, exit 3); whoami says it has no role
    const tenant = await api.newTenant('tokens');
    const byToken = gpuctl({ GPUCTL_URL: api.baseUrl, GPUCTL_TOKEN: tenant.token });
    expect((await byToken.run(['tenants', 'ls'])).code).toBe(3);
    const whoami = await byToken.run(['whoami']);
    expect(whoami.stdout).toMatch(/^role:\s+none \(an API token\)$/m);
    expect(whoami.stdout).toMatch(/^root:\s+yes/m);
  });
});
