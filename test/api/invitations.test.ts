import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../support/api.ts';
import { peopleOver } from '../support/people.ts';
import { startSmtpInbox, type SmtpInbox } from '../support/smtp-inbox.ts';

/**
 * Invitations from a tenant and people in several tenants (docs/decisions.md, "Invitations" and "One tree of
 * authority"): root invites an address with a role, the code goes by mail only, the invitee's own session accepts it,
 * and they sign in to either tenant or switch.
 */
const DAY = 24 * 3_600_000;

let api: TestApi;
let inbox: SmtpInbox;
let helpers: ReturnType<typeof peopleOver>;

beforeAll(async () => {
  inbox = await startSmtpInbox();
  api = await startApi({ auth: { mail: { smtpUrl: inbox.url, from: 'no-reply@cp.test' } } });
  helpers = peopleOver(inbox, call);
});
afterAll(async () => {
  await api?.close();
  await inbox?.close();
});

const call = (method: string, path: string, token?: string, body?: unknown) => api.call(method, path, { ...(token && { token }), ...(body !== undefined && { body }) });
const address = (name: string) => helpers.address(name);
const mailTo = (to: string, subject: RegExp) => helpers.mailTo(to, subject);
const person = (name: string) => helpers.person(name);
const signIn = (email: string, tenantId?: string) => helpers.signIn(email, tenantId);
const codeIn = async (email: string) => /Invitation code: (\S+)/.exec((await mailTo(email, /invited/)).text)![1]!;

/** A person's own tenant (their first sign-in made it), and their owner session there. */
async function owner(name = 'owner') {
  const email = await person(name);
  const session = await signIn(email);
  return { email, session: session.body.token as string, tenantId: session.body.tenant_id as string };
}

describe('invitations', () => {
  it('an owner invites a member; the code goes by mail only; the invitee accepts with their own session and joins with the role and limits', async () => {
    const boss = await owner();
    const inviteeEmail = await person('colleague');
    const made = await call('POST', '/v1/invitations', boss.session, { email: inviteeEmail, role: 'member', spend_limit_usd: '5.00', max_rental_hours: 4 });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body).toMatchObject({ email: inviteeEmail, role: 'member', spend_limit_cents: 500, max_rental_hours: 4, status: 'pending', mailed: true });
    expect(JSON.stringify(made.body)).not.toMatch(/gcpinv_/);
    const code = await codeIn(inviteeEmail);
    expect((await call('GET', '/v1/invitations', boss.session)).body.map((i: { id: string }) => i.id)).toEqual([made.body.id]);

    // the invitee has a tenant of their own; their session there accepts
    const own = (await signIn(inviteeEmail)).body;
    api.clock.advance(1_000);
    const accepted = await call('POST', '/v1/invitations/accept', own.token, { code });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    expect(accepted.body).toEqual({ tenant_id: boss.tenantId, role: 'member' });
    const listed = (await call('GET', '/v1/identities', boss.session)).body.find((p: { email: string }) => p.email === inviteeEmail);
    expect(listed).toMatchObject({ role: 'member', spend_limit_cents: 500, max_rental_hours: 4 });
    expect((await call('GET', '/v1/invitations', boss.session)).body[0].status).toBe('accepted');
    // the boss hears of it, as of any person linked in
    expect((await mailTo(boss.email, /added to your gpu-control-plane tenant/)).text).toContain('as a member');

    // two tenants now: sign-in without tenant_id lands in the first joined, with it in the other; the console switches
    expect((await signIn(inviteeEmail)).body.tenant_id).toBe(own.tenant_id);
    const there = (await signIn(inviteeEmail, boss.tenantId)).body;
    expect(there.tenant_id).toBe(boss.tenantId);
    expect((await call('GET', '/v1/tokens/self', there.token)).body).toMatchObject({ role: 'member', remaining_cents: 500, effective_max_rental_hours: 4, root: false });
    const tenants = (await call('GET', '/v1/auth/tenants', own.token)).body;
    expect(tenants.map((t: { tenant_id: string; role: string; current: boolean }) => [t.tenant_id, t.role, t.current])).toEqual([
      [own.tenant_id, 'owner', true],
      [boss.tenantId, 'member', false],
    ]);
    const switched = await call('POST', '/v1/auth/switch', own.token, { tenant_id: boss.tenantId });
    expect(switched.status).toBe(200);
    expect(switched.body).toMatchObject({ status: 'signed_in', tenant_id: boss.tenantId });
    expect((await call('GET', '/v1/tokens/self', switched.body.token)).body.role).toBe('member');

    // the code works once; another tenant of which they are no person is 404 to sign in to and to switch to
    expect((await call('POST', '/v1/invitations/accept', own.token, { code })).status).toBe(404);
    const stranger = await owner('stranger');
    expect((await signIn(inviteeEmail, stranger.tenantId)).status).toBe(404);
    expect((await call('POST', '/v1/auth/switch', own.token, { tenant_id: stranger.tenantId })).status).toBe(404);
    // removed from the boss's tenant, they keep their own
    expect((await call('DELETE', `/v1/identities/${listed.id}`, boss.session)).status).toBe(204);
    expect((await signIn(inviteeEmail, boss.tenantId)).status).toBe(404);
    expect((await signIn(inviteeEmail)).body.tenant_id).toBe(own.tenant_id);
  });

  it("another address's session, a revoked, expired or made-up code all answer 404 alike; an accepted invitation cannot be revoked", async () => {
    const boss = await owner();
    const invitee = await person('invitee');
    const other = await person('other');
    const invite = async (email: string) => {
      const made = await call('POST', '/v1/invitations', boss.session, { email, role: 'viewer' });
      expect(made.status).toBe(201);
      return { id: made.body.id as string, code: await codeIn(email) };
    };
    const otherSession = (await signIn(other)).body.token as string;
    const inviteeSession = (await signIn(invitee)).body.token as string;

    const forInvitee = await invite(invitee);
    expect((await call('POST', '/v1/invitations/accept', otherSession, { code: forInvitee.code })).status).toBe(404);
    expect((await call('POST', '/v1/invitations/accept', inviteeSession, { code: 'gcpinv_madeup0000000000000000' })).status).toBe(404);

    const revoked = await invite(invitee);
    expect((await call('DELETE', `/v1/invitations/${revoked.id}`, boss.session)).status).toBe(204);
    expect((await call('POST', '/v1/invitations/accept', inviteeSession, { code: revoked.code })).status).toBe(404);

    const expired = await invite(invitee);
    api.clock.advance(7 * DAY + 1_000);
    const late = await call('POST', '/v1/invitations/accept', inviteeSession, { code: expired.code });
    expect(late.status).toBe(404);
    expect((await call('GET', '/v1/invitations', boss.session)).body.find((i: { id: string }) => i.id === expired.id).status).toBe('expired');

    // the first one expired too by now; a fresh one is accepted, after which it cannot be revoked, and a second
    // invitation to the same person is 409 at acceptance
    const fresh = await invite(invitee);
    expect((await call('POST', '/v1/invitations/accept', inviteeSession, { code: fresh.code })).status).toBe(200);
    expect((await call('DELETE', `/v1/invitations/${fresh.id}`, boss.session)).status).toBe(409);
    const again = await invite(invitee);
    expect((await call('POST', '/v1/invitations/accept', inviteeSession, { code: again.code })).status).toBe(409);
  });

  it('only root invites; only an owner invites an owner; limits are for members; another tenant\'s invitation is 404', async () => {
    const boss = await owner();
    const a = await api.newTenant('root-token-tenant');
    const capped = (await call('POST', '/v1/tokens', a.token, { scopes: ['read', 'rent', 'manage', 'billing'], spend_limit_usd: '5.00' })).body.token as string;
    const invitee = await person('x');
    const refused = await call('POST', '/v1/invitations', capped, { email: invitee, role: 'viewer' });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(/root credential/);
    expect((await call('GET', '/v1/invitations', capped)).status).toBe(403);
    // a root token stands as an admin: it invites, but no owner
    expect((await call('POST', '/v1/invitations', a.token, { email: invitee, role: 'owner' })).status).toBe(403);
    expect((await call('POST', '/v1/invitations', a.token, { email: invitee, role: 'admin', spend_limit_usd: '5.00' })).status).toBe(422);
    expect((await call('POST', '/v1/invitations', a.token, { email: 'not an address', role: 'viewer' })).status).toBe(422);
    const made = await call('POST', '/v1/invitations', a.token, { email: invitee, role: 'admin' });
    expect(made.status).toBe(201);
    expect((await call('DELETE', `/v1/invitations/${made.body.id}`, boss.session)).status).toBe(404);
    expect((await call('POST', '/v1/invitations', boss.session, { email: await person('co-owner'), role: 'owner' })).status).toBe(201);
  });

  it('an invitation ends with the authority it came from: a root token revoked before acceptance takes it along', async () => {
    const t = await api.newTenant('short-lived-root');
    const linker = (await call('POST', '/v1/tokens', t.token, { scopes: ['read', 'rent', 'manage', 'billing'] })).body;
    const invitee = await person('late');
    expect((await call('POST', '/v1/invitations', linker.token, { email: invitee, role: 'viewer' })).status).toBe(201);
    const code = await codeIn(invitee);
    expect((await call('DELETE', `/v1/tokens/${linker.id}`, t.token)).status).toBe(204);
    const session = (await signIn(invitee)).body.token as string;
    expect((await call('POST', '/v1/invitations/accept', session, { code })).status).toBe(404);
    // an API token has no person to join
    expect((await call('POST', '/v1/invitations/accept', t.token, { code })).status).toBe(403);
  });

  it("invitation mail takes from the address's mail allowance: past it the invitation is made and not mailed", async () => {
    const boss = await owner();
    const target = address('flooded');
    const mailed: boolean[] = [];
    for (let i = 0; i < 6; i++) {
      const made = await call('POST', '/v1/invitations', boss.session, { email: target, role: 'viewer' });
      expect(made.status).toBe(201);
      mailed.push(made.body.mailed);
    }
    expect(mailed).toEqual([true, true, true, true, true, false]);
  });
});
