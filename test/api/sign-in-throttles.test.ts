import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR_KEY, startApi, type ApiResponse, type TestApi } from '../support/api.ts';
import { freshPostgres } from '../support/database.ts';
import { startSmtpInbox, type ReceivedMail, type SmtpInbox } from '../support/smtp-inbox.ts';

/**
 * Sign-in throttles and the mail allowance over HTTP on PostgreSQL (docs/decisions.md, "Sign-in throttles",
 * "Mail to one address"): failures are counted in the same step that checks the limit, so parallel wrong
 * answers past the limit are never checked; failed passwords count per email and client address (the owner
 * elsewhere still signs in) under a per-email ceiling; one address gets at most 5 mails an hour.
 */
const PASSWORD = 'Correct-Horse-Battery-9';
const HOUR = 3_600_000;
const op = { 'x-service-operator-key': OPERATOR_KEY };

let api: TestApi;
let inbox: SmtpInbox;
let seq = 0;
const address = (name = 'person') => `${name}.${Date.now().toString(36)}${seq++}@example.com`;
/** Connections from other loopback addresses: other clients, as the server sees them. */
const agents = new Map<string, Agent>();

beforeAll(async () => {
  inbox = await startSmtpInbox();
  api = await startApi({ auth: { mail: { smtpUrl: inbox.url, from: 'no-reply@cp.test' } } });
});
afterAll(async () => {
  await api?.close();
  await inbox?.close();
  await Promise.all([...agents.values()].map((agent) => agent.close()));
});

const post = (path: string, body: unknown) => api.call('POST', path, { body });
/** POST from the client address `from` (127.0.0.x). */
async function postFrom(from: string, path: string, body: unknown): Promise<ApiResponse> {
  let agent = agents.get(from);
  if (!agent) agents.set(from, (agent = new Agent({ localAddress: from })));
  const response = await undiciFetch(`${api.baseUrl}${path}`, { method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, headers: response.headers as unknown as Headers, body: text ? JSON.parse(text) : undefined };
}
const mailsTo = (to: string) => inbox.received.filter((m) => m.to.includes(to));
/** The next mail to `to` whose subject matches, that no earlier call handed out. */
const handedOut = new Set<ReceivedMail>();
async function mailTo(to: string, subject: RegExp): Promise<ReceivedMail> {
  const mail = await inbox.next((m: ReceivedMail) => !handedOut.has(m) && m.to.includes(to) && subject.test(m.subject), 10_000);
  handedOut.add(mail);
  return mail;
}
const codeOf = (mail: ReceivedMail) => /\b(\d{6})\b/.exec(mail.text)![1]!;
/** Mail leaves in the background: long enough for any mail still on its way to arrive. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 500));
/** Mail leaves in the background: waits until `count` mails to `to` have arrived (then `settle` to see no more come). */
const arrived = (to: string, count: number) => inbox.next(() => mailsTo(to).length >= count, 30_000);

async function confirmedAccount(email = address()) {
  expect((await post('/v1/auth/sign-up', { email, password: PASSWORD })).status).toBe(200);
  const code = codeOf(await mailTo(email, /confirmation/));
  expect((await post('/v1/auth/confirm-email', { email, code })).status).toBe(200);
  return email;
}

const statuses = (answers: ApiResponse[]) => {
  const counts: Record<number, number> = {};
  for (const answer of answers) counts[answer.status] = (counts[answer.status] ?? 0) + 1;
  return counts;
};

describe('failures are counted in the step that checks the limit', () => {
  it('an email with 8 recent failures: of 40 parallel wrong passwords 2 are checked (401), 38 get 429 with Retry-After', async () => {
    const email = await confirmedAccount();
    for (let i = 0; i < 8; i++) expect((await post('/v1/auth/sign-in', { email, password: `Wrong-Password-${i}` })).status).toBe(401);
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => post('/v1/auth/sign-in', { email, password: `Parallel-Wrong-${i}` })));
    expect(statuses(answers)).toEqual({ 401: 2, 429: 38 });
    for (const limited of answers.filter((a) => a.status === 429)) {
      const retry = Number(limited.headers.get('retry-after'));
      expect(retry).toBeGreaterThan(0);
      expect(retry).toBeLessThanOrEqual(900);
    }
    // the right password waits for the window too
    expect((await post('/v1/auth/sign-in', { email, password: PASSWORD })).status).toBe(429);
  });

  it('25 parallel wrong codes: 5 are tried (422), 20 get 429 with Retry-After; then the right code is 429 too', async () => {
    const email = address('codes');
    expect((await post('/v1/auth/sign-up', { email, password: PASSWORD })).status).toBe(200);
    const real = codeOf(await mailTo(email, /confirmation/));
    const wrong = (i: number) => String((Number(real) + 1 + i) % 1_000_000).padStart(6, '0');
    const answers = await Promise.all(Array.from({ length: 25 }, (_, i) => post('/v1/auth/confirm-email', { email, code: wrong(i) })));
    expect(statuses(answers)).toEqual({ 422: 5, 429: 20 });
    for (const limited of answers.filter((a) => a.status === 429)) expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    const late = await post('/v1/auth/confirm-email', { email, code: real });
    expect(late.status).toBe(429);
    expect(Number(late.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('one at a time: a code takes 5 wrong tries, the sixth is 429 with Retry-After, never another 422', async () => {
    const email = await confirmedAccount(address('reset-codes'));
    expect((await post('/v1/auth/forgot-password', { email })).status).toBe(200);
    const real = codeOf(await mailTo(email, /reset/));
    const wrong = String((Number(real) + 1) % 1_000_000).padStart(6, '0');
    for (let i = 0; i < 5; i++) expect((await post('/v1/auth/reset-password', { email, code: wrong, new_password: 'Another-Long-Pass-1' })).status).toBe(422);
    const sixth = await post('/v1/auth/reset-password', { email, code: wrong, new_password: 'Another-Long-Pass-1' });
    expect(sixth.status).toBe(429);
    expect(Number(sixth.headers.get('retry-after'))).toBeGreaterThan(0);
    // after the window a new code works
    api.clock.advance(15 * 60_000 + 1_000);
    expect((await post('/v1/auth/forgot-password', { email })).status).toBe(200);
    const fresh = codeOf(await mailTo(email, /reset/));
    expect((await post('/v1/auth/reset-password', { email, code: fresh, new_password: 'Another-Long-Pass-1' })).status).toBe(200);
  });
});

describe('a guesser elsewhere does not lock the owner out', () => {
  it('ten wrong passwords from one address hold back that address only; the owner signs in from another', async () => {
    const email = await confirmedAccount(address('owner'));
    for (let i = 0; i < 10; i++) expect((await postFrom('127.0.0.2', '/v1/auth/sign-in', { email, password: `Guess-Number-${i}` })).status).toBe(401);
    const guesser = await postFrom('127.0.0.2', '/v1/auth/sign-in', { email, password: PASSWORD });
    expect(guesser.status).toBe(429);
    expect(Number(guesser.headers.get('retry-after'))).toBeGreaterThan(0);
    const owner = await postFrom('127.0.0.3', '/v1/auth/sign-in', { email, password: PASSWORD });
    expect(owner.status).toBe(200);
    expect(owner.body.status).toBe('signed_in');
  });

  it('from all addresses together an email takes 50 failures in 15 minutes; the 51st try is 429 from anywhere', async () => {
    const email = await confirmedAccount(address('ceiling'));
    for (let client = 0; client < 5; client++) {
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => postFrom(`127.0.1.${client + 1}`, '/v1/auth/sign-in', { email, password: `Guess-${client}-${i}-xx` })));
      expect(statuses(answers)).toEqual({ 401: 10 });
    }
    const fresh = await postFrom('127.0.1.99', '/v1/auth/sign-in', { email, password: PASSWORD });
    expect(fresh.status).toBe(429);
    api.clock.advance(15 * 60_000 + 1_000);
    expect((await postFrom('127.0.1.99', '/v1/auth/sign-in', { email, password: PASSWORD })).status).toBe(200);
  });
});

describe('at most 5 mails to one address an hour, whatever is asked', () => {
  it('180 parallel forgot and resend calls mail a confirmed address at most 5 times an hour; every answer is the same; the last code stays live', async () => {
    const email = await confirmedAccount(address('flooded'));
    api.clock.advance(HOUR + 1_000); // the sign-up's own mail leaves the window
    // four asks one at a time: four reset mails, each code replacing the one before
    for (let i = 0; i < 4; i++) {
      expect((await post('/v1/auth/forgot-password', { email })).status).toBe(200);
      await mailTo(email, /reset/);
    }
    const before = mailsTo(email).length;
    const answers = await Promise.all(
      Array.from({ length: 180 }, (_, i) => post(i % 2 === 0 ? '/v1/auth/forgot-password' : '/v1/auth/resend-code', { email })),
    );
    expect(new Set(answers.map((a) => `${a.status} ${JSON.stringify(a.body)}`)).size).toBe(1);
    expect(answers[0]!.status).toBe(200);
    await settle();
    // one ask was left: one more mail at most (none when a resend, which mails a confirmed address nothing, took it)
    expect(mailsTo(email).length - before).toBeLessThanOrEqual(1);
    // the code of the last mail that left is still the live one: the asks past the allowance replaced nothing
    const last = mailsTo(email).filter((m) => /reset/.test(m.subject)).at(-1)!;
    const reset = await post('/v1/auth/reset-password', { email, code: codeOf(last), new_password: 'Flood-Survivor-2026' });
    expect(reset.status).toBe(200);
  });

  it('sign-up and invitation mails count too; after the hour the address is mailed again', async () => {
    const email = address('counted');
    const first = await post('/v1/auth/sign-up', { email, password: PASSWORD });
    for (let i = 0; i < 4; i++) expect((await post('/v1/auth/resend-code', { email })).body).toEqual(first.body);
    await arrived(email, 5);
    await settle();
    expect(mailsTo(email)).toHaveLength(5);
    // the sixth ask of any kind: the same answers, no mail
    expect((await post('/v1/auth/sign-up', { email, password: PASSWORD })).body).toEqual(first.body);
    expect((await post('/v1/auth/forgot-password', { email })).body).toEqual(first.body);
    const invited = await api.call('POST', '/v1/operator/users', { headers: op, body: { email } });
    expect(invited.status).toBe(201);
    await settle();
    expect(mailsTo(email)).toHaveLength(5);

    api.clock.advance(HOUR + 1_000);
    expect((await api.call('POST', '/v1/operator/users', { headers: op, body: { email } })).status).toBe(201);
    const invitation = await mailTo(email, /invited/);
    expect(invitation.text).toMatch(/Temporary password: /);
    expect(mailsTo(email)).toHaveLength(6);
  });
});

describe('two replicas on one database', () => {
  it('share the counts: of 40 parallel wrong passwords split across them 10 are checked, and 60 parallel forgots mail 5 times', async () => {
    const database = await freshPostgres();
    const config = { auth: { mail: { smtpUrl: inbox.url, from: 'no-reply@cp.test' } } };
    const one = await startApi(config, { database });
    const two = await startApi(config, { database, clock: one.clock });
    try {
      const email = address('replicated');
      expect((await one.call('POST', '/v1/auth/sign-up', { body: { email, password: PASSWORD } })).status).toBe(200);
      const code = codeOf(await mailTo(email, /confirmation/));
      expect((await two.call('POST', '/v1/auth/confirm-email', { body: { email, code } })).status).toBe(200);

      const guesses = await Promise.all(
        Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? one : two).call('POST', '/v1/auth/sign-in', { body: { email, password: `Replica-Guess-${i}` } })),
      );
      expect(statuses(guesses)).toEqual({ 401: 10, 429: 30 });

      one.clock.advance(HOUR + 1_000);
      const before = mailsTo(email).length;
      const asks = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? one : two).call('POST', '/v1/auth/forgot-password', { body: { email } })));
      expect(new Set(asks.map((a) => a.status))).toEqual(new Set([200]));
      await arrived(email, before + 5);
      await settle();
      expect(mailsTo(email).length - before).toBe(5);
    } finally {
      await two.close();
      await one.close();
      await database.drop();
    }
  });
});
