import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR_KEY, startApi, type TestApi } from '../support/api.ts';
import { startSmtpInbox, type ReceivedMail, type SmtpInbox } from '../support/smtp-inbox.ts';

/**
 * Sign-up of an address nobody has confirmed yet, over HTTP on PostgreSQL with a real SMTP server
 * (docs/decisions.md, "Unconfirmed sign-ups"): the first password stands, a second sign-up answers as the
 * first and is told to the mailbox; forgot-password works before confirmation (a reset confirms); an
 * operator's invitation takes such an address over; an unconfirmed sign-up is forgotten after 7 days.
 */
const FIRST = 'Owner-Chose-This-2026';
const SECOND = 'Attacker-Chose-This-99';
const DAY = 86_400_000;
const op = { 'x-service-operator-key': OPERATOR_KEY };

let api: TestApi;
let inbox: SmtpInbox;
let seq = 0;
const address = (name = 'person') => `${name}.${Date.now().toString(36)}${seq++}@example.com`;

beforeAll(async () => {
  inbox = await startSmtpInbox();
  api = await startApi({ auth: { mail: { smtpUrl: inbox.url, from: 'no-reply@cp.test' } } });
});
afterAll(async () => {
  await api?.close();
  await inbox?.close();
});

const post = (path: string, body: unknown) => api.call('POST', path, { body });
const handedOut = new Set<ReceivedMail>();
/** The next mail to `to` whose subject matches, that no earlier call handed out. */
async function mailTo(to: string, subject: RegExp): Promise<ReceivedMail> {
  const mail = await inbox.next((m: ReceivedMail) => !handedOut.has(m) && m.to.includes(to) && subject.test(m.subject), 10_000);
  handedOut.add(mail);
  return mail;
}
const codeOf = (mail: ReceivedMail) => /\b(\d{6})\b/.exec(mail.text)![1]!;
const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

describe('a second sign-up of an unconfirmed address', () => {
  it('keeps the first password, answers exactly as the first, and mails that someone tried again', async () => {
    const email = address('owner');
    const first = await post('/v1/auth/sign-up', { email, password: FIRST });
    const code = codeOf(await mailTo(email, /confirmation code/));
    const second = await post('/v1/auth/sign-up', { email, password: SECOND });
    expect({ status: second.status, body: second.body }).toEqual({ status: first.status, body: first.body });

    const notice = await mailTo(email, /sign up again/i);
    expect(notice.text).toMatch(/password chosen at the first sign-up stands/);
    expect(notice.text).toMatch(/forgot-password/);
    expect(notice.text).not.toMatch(/\b\d{6}\b/);

    // the owner confirms with the code mailed to them: their password is the one that signs in
    expect((await post('/v1/auth/confirm-email', { email, code })).status).toBe(200);
    expect((await post('/v1/auth/sign-in', { email, password: SECOND })).status).toBe(401);
    const signedIn = await post('/v1/auth/sign-in', { email, password: FIRST });
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.status).toBe('signed_in');
  });

  it('answers a fresh address and an unconfirmed one the same, byte for byte (masks alike)', async () => {
    const stamp = `${Date.now().toString(36)}${seq++}`;
    const [taken, fresh] = [`twin${stamp}aa${stamp}@example.com`, `twin${stamp}ab${stamp}@example.com`];
    await post('/v1/auth/sign-up', { email: taken, password: FIRST });
    const again = await post('/v1/auth/sign-up', { email: taken, password: SECOND });
    const unknown = await post('/v1/auth/sign-up', { email: fresh, password: SECOND });
    expect(again.status).toBe(unknown.status);
    expect(again.body).toEqual(unknown.body);
  });
});

describe('forgot-password before the address is confirmed', () => {
  it('mails a reset code; the reset sets the password and confirms the address', async () => {
    const email = address('unconfirmed-reset');
    await post('/v1/auth/sign-up', { email, password: SECOND });
    expect((await post('/v1/auth/forgot-password', { email })).status).toBe(200);
    const code = codeOf(await mailTo(email, /password reset code/));
    expect((await post('/v1/auth/reset-password', { email, code, new_password: FIRST })).body).toEqual({ status: 'password_reset' });
    expect((await post('/v1/auth/sign-in', { email, password: SECOND })).status).toBe(401);
    expect((await post('/v1/auth/sign-in', { email, password: FIRST })).body.status).toBe('signed_in');
  });
});

describe('an operator invites an address someone signed up and never confirmed', () => {
  it('takes it over: the squatter\'s password and code stop working, the invitee joins the tenant', async () => {
    const owner = await api.newTenant('team');
    const email = address('squatted');
    await post('/v1/auth/sign-up', { email, password: SECOND });
    const squatterCode = codeOf(await mailTo(email, /confirmation code/));

    const invited = await api.call('POST', '/v1/operator/users', { headers: op, body: { email, tenant_id: owner.tenantId } });
    expect(invited.status).toBe(201);
    expect(invited.body).toEqual({ email, tenant_id: owner.tenantId, status: 'invited' });
    const temporary = /^Temporary password: (.+)$/m.exec((await mailTo(email, /invited/)).text)![1]!;

    expect((await post('/v1/auth/sign-in', { email, password: SECOND })).status).toBe(401);
    expect((await post('/v1/auth/confirm-email', { email, code: squatterCode })).status).toBe(422);
    const step = await post('/v1/auth/sign-in', { email, password: temporary });
    expect(step.body.status).toBe('new_password_required');
    const done = await post('/v1/auth/new-password', { email, session: step.body.session, new_password: FIRST });
    expect(done.body).toMatchObject({ status: 'signed_in', tenant_id: owner.tenantId });
  });
});

describe('an unconfirmed sign-up is forgotten after 7 days', () => {
  it('then the address signs up afresh, with the new password; nothing is mailed for the old one', async () => {
    const email = address('stale');
    await post('/v1/auth/sign-up', { email, password: SECOND });
    const staleCode = codeOf(await mailTo(email, /confirmation code/));
    api.clock.advance(7 * DAY + 60_000);

    // forgotten: its code is void and a resend mails nothing
    expect((await post('/v1/auth/confirm-email', { email, code: staleCode })).status).toBe(422);
    const mailsBefore = inbox.received.filter((m) => m.to.includes(email)).length;
    expect((await post('/v1/auth/resend-code', { email })).status).toBe(200);
    await settle();
    expect(inbox.received.filter((m) => m.to.includes(email))).toHaveLength(mailsBefore);

    expect((await post('/v1/auth/sign-up', { email, password: FIRST })).status).toBe(200);
    const code = codeOf(await mailTo(email, /confirmation code/));
    expect((await post('/v1/auth/confirm-email', { email, code })).status).toBe(200);
    expect((await post('/v1/auth/sign-in', { email, password: SECOND })).status).toBe(401);
    expect((await post('/v1/auth/sign-in', { email, password: FIRST })).body.status).toBe('signed_in');
  });

  it('six days on it is still there: the first password stands', async () => {
    const email = address('young');
    await post('/v1/auth/sign-up', { email, password: FIRST });
    const code = codeOf(await mailTo(email, /confirmation code/));
    api.clock.advance(6 * DAY);
    await post('/v1/auth/sign-up', { email, password: SECOND });
    // the first code expired (15 minutes); a new one confirms the first sign-up
    expect((await post('/v1/auth/confirm-email', { email, code })).status).toBe(422);
    expect((await post('/v1/auth/resend-code', { email })).status).toBe(200);
    expect((await post('/v1/auth/confirm-email', { email, code: codeOf(await mailTo(email, /confirmation code/)) })).status).toBe(200);
    expect((await post('/v1/auth/sign-in', { email, password: FIRST })).body.status).toBe('signed_in');
  });
});
