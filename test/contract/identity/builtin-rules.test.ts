import { parseOptions } from '@node-rs/argon2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../adapters/clock/manual-clock.ts';
import { createBuiltinIdentity, fromEnv, type BuiltinIdentity } from '../../../adapters/identity/builtin/index.ts';
import { hashSecret } from '../../../adapters/identity/builtin/passwords.ts';
import { MikroStorage } from '../../../adapters/storage/mikro-storage.ts';
import type { Mail, Mailer } from '../../../core/ports/mailer.ts';
import { createMailer } from '../../../adapters/mail/index.ts';
import { pino } from 'pino';
import { freshDatabase, type TestDatabase } from '../../support/database.ts';
import { startSmtpInbox } from '../../support/smtp-inbox.ts';
import { codeIn, isConfirmationMail, isResetMail, MailOutbox, temporaryPasswordIn } from '../../support/mail-outbox.ts';
import { domainErrorOf, pkcePair } from '../identity-contract.ts';

/** Rules of the built-in provider alone (the shared ones are in identity-contract.ts). */

const PASSWORD = 'Correct-Horse-42';
const OTHER = 'Battery-Staple-77';
const REDIRECT = 'http://127.0.0.1:4000/cb';

let database: TestDatabase;
let storage: MikroStorage;
let clock: ManualClock;
let outbox: MailOutbox;
let identity: BuiltinIdentity;
const mailErrors: { error: unknown; mail: { to: string; subject: string } }[] = [];

beforeAll(async () => {
  database = await freshDatabase();
  storage = await MikroStorage.open(database.target);
  clock = new ManualClock('2026-11-23T10:00:00.000Z');
  outbox = new MailOutbox();
  identity = createBuiltinIdentity({
    database: storage,
    clock,
    mailer: outbox,
    publicUrl: 'https://cp.example/',
    onMailError: (error, mail) => mailErrors.push({ error, mail }),
  });
});
afterAll(async () => {
  await identity?.idle();
  await storage?.close();
  await database?.drop();
});

let serial = 0;
const address = (label: string) => `${label}-${process.pid}-${++serial}@example.com`;
const confirmCode = async (email: string) => codeIn(await outbox.next(email, 'confirm', isConfirmationMail));
const confirmedUser = async (email: string) => {
  await identity.signUp(email, PASSWORD);
  await identity.confirmEmail(email, await confirmCode(email));
};
const userRow = async (email: string) => (await storage.execute<Record<string, any>[]>('select * from builtin_users where email = ?', [email]))[0]!;
const codeRows = async (email: string) =>
  storage.execute<Record<string, any>[]>('select c.* from builtin_codes c join builtin_users u using (user_id) where u.email = ?', [email]);

describe('settings', () => {
  it('publishes the hosted page for the public client with PKCE S256', () => {
    expect(identity.publicConfig()).toEqual({
      kind: 'builtin',
      authorize_url: 'https://cp.example/auth/authorize',
      client_id: 'gpu-control-plane',
      code_challenge_method: 'S256',
    });
  });

  it('reads AUTH_REDIRECT_URIS, naming the variable of a wrong entry', () => {
    expect(fromEnv({})).toEqual({ redirectUris: [] });
    expect(fromEnv({ AUTH_REDIRECT_URIS: ' https://a.example/cb , http://b.example:8080/x?y=1,' })).toEqual({ redirectUris: ['https://a.example/cb', 'http://b.example:8080/x?y=1'] });
    expect(() => fromEnv({ AUTH_REDIRECT_URIS: 'https://a.example/cb,nope' })).toThrow(/^AUTH_REDIRECT_URIS: .*"nope"/);
    expect(() => fromEnv({ AUTH_REDIRECT_URIS: 'ftp://a.example/cb' })).toThrow(/^AUTH_REDIRECT_URIS/);
    expect(() => fromEnv({ AUTH_REDIRECT_URIS: 'https://a.example/cb#frag' })).toThrow(/^AUTH_REDIRECT_URIS/);
    expect(() => fromEnv({ AUTH_REDIRECT_URIS: 'https://u:p@a.example/cb' })).toThrow(/^AUTH_REDIRECT_URIS/);
  });
});

describe('what is stored', () => {
  it('keeps the password as argon2id with 19 MiB, 2 passes and 1 lane, and the address lower-cased', async () => {
    const email = address('Stored').replace('stored', 'StOrEd');
    await identity.signUp(email, PASSWORD);
    const row = await userRow(email.toLowerCase());
    expect(row).toMatchObject({ user_id: expect.stringMatching(/^usr_[a-z2-7]{16}$/), email: email.toLowerCase(), status: 'unconfirmed' });
    expect(row.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(row.password_hash).not.toContain(PASSWORD);
  });

  it('keeps a code only as an argon2id hash (never its 6 digits, never a bare SHA-256), one per purpose, with 5 tries and 15 minutes', async () => {
    const email = address('codes');
    await identity.signUp(email, PASSWORD);
    const code = await confirmCode(email);
    const [row, ...more] = await codeRows(email);
    expect(more).toEqual([]);
    expect(row).toMatchObject({ purpose: 'confirm', tries_left: 5 });
    expect(row!.code_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(JSON.stringify(row)).not.toContain(code);
    expect(new Date(row!.expires_at).getTime() - clock.now().getTime()).toBe(15 * 60_000);
    // two hashes of the same code differ (salted): a table of precomputed hashes is no use
    expect(await hashSecret(code)).not.toBe(row!.code_hash);
  });

  it('keeps authorization codes and new-password sessions only as SHA-256 digests', async () => {
    const email = address('digests');
    await confirmedUser(email);
    const outcome = await identity.signIn(email, PASSWORD);
    if (outcome.kind !== 'signed_in') throw new Error('expected signed_in');
    const code = await identity.issueAuthorizationCode(outcome.identity, { redirectUri: REDIRECT, codeChallenge: pkcePair().challenge, state: null });
    const rows = await storage.execute<Record<string, any>[]>('select code_digest from builtin_authorization_codes');
    expect(rows.map((r) => r.code_digest)).toContainEqual(expect.stringMatching(/^[0-9a-f]{64}$/));
    expect(JSON.stringify(rows)).not.toContain(code);

    const invited = address('digestinvite');
    await identity.invite(invited);
    await identity.idle();
    const step = await identity.signIn(invited, temporaryPasswordIn(outbox.to(invited).at(-1)!)!);
    if (step.kind !== 'new_password_required') throw new Error('expected new_password_required');
    const sessions = await storage.execute<Record<string, any>[]>('select session_digest from builtin_password_sessions');
    expect(JSON.stringify(sessions)).not.toContain(step.session);
  });

  it('replaces a hash made with weaker parameters at the next sign-in', async () => {
    const email = address('rehash');
    await confirmedUser(email);
    const { hash } = await import('@node-rs/argon2');
    const weak = await hash(PASSWORD, { memoryCost: 4096, timeCost: 1, parallelism: 1, algorithm: 2 as never });
    await storage.execute('update builtin_users set password_hash = ? where email = ?', [weak, email]);
    expect((await identity.signIn(email, PASSWORD)).kind).toBe('signed_in');
    const now = (await userRow(email)).password_hash as string;
    expect(parseOptions(now)).toMatchObject({ memoryCost: 19_456, timeCost: 2, parallelism: 1 });
    expect((await identity.signIn(email, PASSWORD)).kind).toBe('signed_in');
  });
});

describe('password policy', () => {
  it('takes 10 to 256 characters (counted as characters, not bytes) and refuses the address itself, whatever the capitals', async () => {
    const email = address('policy');
    const refused = async (password: string) => (await domainErrorOf(identity.signUp(email, password))).problems;
    expect(await refused('123456789')).toEqual([{ loc: ['body', 'password'], msg: expect.stringMatching(/at least 10/) }]);
    expect(await refused('x'.repeat(257))).toEqual([{ loc: ['body', 'password'], msg: expect.stringMatching(/at most 256/) }]);
    expect(await refused(email.toUpperCase())).toEqual([{ loc: ['body', 'password'], msg: expect.stringMatching(/email address/) }]);
    await identity.signUp(address('emoji'), '🔑'.repeat(10));
    await identity.signUp(address('longest'), 'y'.repeat(256));
  });

  it('applies to resets and new passwords, on new_password', async () => {
    const email = address('policyreset');
    await confirmedUser(email);
    await identity.forgotPassword(email);
    const code = codeIn(await outbox.next(email, 'reset', isResetMail));
    expect((await domainErrorOf(identity.resetPassword(email, code, email))).problems[0]?.loc).toEqual(['body', 'new_password']);
  });

  it('refuses an address that is not one, on email', async () => {
    for (const bad of ['nobody', 'a@b', '@example.com', 'a b@example.com', `${'x'.repeat(250)}@example.com`]) {
      expect((await domainErrorOf(identity.signUp(bad, PASSWORD))).problems[0]?.loc, bad).toEqual(['body', 'email']);
      expect((await domainErrorOf(identity.forgotPassword(bad))).problems[0]?.loc, bad).toEqual(['body', 'email']);
    }
  });
});

describe('expiry on the provider clock', () => {
  it('a code lasts 15 minutes', async () => {
    const email = address('codeexpiry');
    await identity.signUp(email, PASSWORD);
    const code = await confirmCode(email);
    clock.advanceMinutes(15);
    expect((await domainErrorOf(identity.confirmEmail(email, code))).code).toBe('INVALID_INPUT');
    await identity.resendCode(email);
    const fresh = await confirmCode(email);
    clock.advance(15 * 60_000 - 1);
    await identity.confirmEmail(email, fresh);
  });

  it('an authorization code lasts 5 minutes', async () => {
    const email = address('authexpiry');
    await confirmedUser(email);
    const outcome = await identity.signIn(email, PASSWORD);
    if (outcome.kind !== 'signed_in') throw new Error('expected signed_in');
    const issue = async () => {
      const pkce = pkcePair();
      return { pkce, code: await identity.issueAuthorizationCode(outcome.identity, { redirectUri: REDIRECT, codeChallenge: pkce.challenge, state: null }) };
    };
    const late = await issue();
    clock.advanceMinutes(5);
    expect((await domainErrorOf(identity.exchangeCode({ code: late.code, redirectUri: REDIRECT, codeVerifier: late.pkce.verifier }))).problems[0]?.loc).toEqual(['body', 'code']);
    const inTime = await issue();
    clock.advance(5 * 60_000 - 1);
    expect(await identity.exchangeCode({ code: inTime.code, redirectUri: REDIRECT, codeVerifier: inTime.pkce.verifier })).toEqual(outcome.identity);
  });

  it('a new-password session lasts 10 minutes', async () => {
    const email = address('sessionexpiry');
    await identity.invite(email);
    await identity.idle();
    const temporary = temporaryPasswordIn(outbox.to(email).at(-1)!)!;
    const step = await identity.signIn(email, temporary);
    if (step.kind !== 'new_password_required') throw new Error('expected new_password_required');
    clock.advanceMinutes(10);
    expect((await domainErrorOf(identity.completeNewPassword(email, step.session, OTHER))).code).toBe('INVALID_CREDENTIALS');
    const next = await identity.signIn(email, temporary);
    if (next.kind !== 'new_password_required') throw new Error('expected new_password_required');
    clock.advance(10 * 60_000 - 1);
    expect((await identity.completeNewPassword(email, next.session, OTHER)).email).toBe(email);
  });

  it('an invitation\'s temporary password lasts 7 days; then it answers 409 saying to ask for a new invitation, which renews it', async () => {
    const email = address('inviteexpiry');
    const invited = await identity.invite(email);
    await identity.idle();
    const temporary = temporaryPasswordIn(outbox.to(email).at(-1)!)!;
    expect(outbox.to(email).at(-1)!.text).toMatch(/7 days/);
    clock.advance(7 * 86_400_000 - 1);
    const inTime = await identity.signIn(email, temporary);
    if (inTime.kind !== 'new_password_required') throw new Error('expected new_password_required');
    clock.advance(1);
    const expired = await domainErrorOf(identity.signIn(email, temporary));
    expect({ code: expired.code, message: expired.message }).toEqual({ code: 'CONFLICT', message: expect.stringMatching(/expired .*7 days.*ask the operator .*new invitation/) });
    // only to whoever knows it: a wrong password is the usual 401
    expect((await domainErrorOf(identity.signIn(email, 'not-the-temporary-one'))).code).toBe('INVALID_CREDENTIALS');

    // the same address invited again: the same person, a fresh password for 7 more days; the old one, and a
    // new-password step begun with it, are void
    expect(await identity.invite(email)).toEqual(invited);
    await identity.idle();
    const fresh = temporaryPasswordIn(outbox.to(email).at(-1)!)!;
    expect(fresh).not.toBe(temporary);
    expect((await domainErrorOf(identity.completeNewPassword(email, inTime.session, OTHER))).code).toBe('INVALID_CREDENTIALS');
    expect((await domainErrorOf(identity.signIn(email, temporary))).code).toBe('INVALID_CREDENTIALS');
    expect(new Date((await userRow(email)).temporary_password_expires_at)).toEqual(new Date(clock.now().getTime() + 7 * 86_400_000));
    clock.advance(7 * 86_400_000 - 1);
    const step = await identity.signIn(email, fresh);
    if (step.kind !== 'new_password_required') throw new Error('expected new_password_required');
    expect(await identity.completeNewPassword(email, step.session, OTHER)).toEqual(invited);
    expect((await userRow(email)).temporary_password_expires_at).toBeNull();
  });
});

describe('exchange: which field is wrong', () => {
  it('names code, redirect_uri or code_verifier, and a code is void after any attempt', async () => {
    const email = address('fields');
    await confirmedUser(email);
    const outcome = await identity.signIn(email, PASSWORD);
    if (outcome.kind !== 'signed_in') throw new Error('expected signed_in');
    const issue = async () => {
      const pkce = pkcePair();
      return { pkce, code: await identity.issueAuthorizationCode(outcome.identity, { redirectUri: REDIRECT, codeChallenge: pkce.challenge, state: null }) };
    };
    const locOf = async (request: { code: string; redirectUri: string | null; codeVerifier: string | null }) => (await domainErrorOf(identity.exchangeCode(request))).problems[0]?.loc;

    expect(await locOf({ code: 'nope', redirectUri: REDIRECT, codeVerifier: pkcePair().verifier })).toEqual(['body', 'code']);
    expect(await locOf({ code: '', redirectUri: REDIRECT, codeVerifier: pkcePair().verifier })).toEqual(['body', 'code']);

    const a = await issue();
    expect(await locOf({ code: a.code, redirectUri: 'http://127.0.0.1:4000/other', codeVerifier: a.pkce.verifier })).toEqual(['body', 'redirect_uri']);
    expect(await locOf({ code: a.code, redirectUri: REDIRECT, codeVerifier: a.pkce.verifier })).toEqual(['body', 'code']);

    const b = await issue();
    expect(await locOf({ code: b.code, redirectUri: null, codeVerifier: b.pkce.verifier })).toEqual(['body', 'redirect_uri']);

    const c = await issue();
    expect(await locOf({ code: c.code, redirectUri: REDIRECT, codeVerifier: pkcePair().verifier })).toEqual(['body', 'code_verifier']);
    const d = await issue();
    expect(await locOf({ code: d.code, redirectUri: REDIRECT, codeVerifier: null })).toEqual(['body', 'code_verifier']);
    const e = await issue();
    // the challenge itself is not the verifier
    expect(await locOf({ code: e.code, redirectUri: REDIRECT, codeVerifier: e.pkce.challenge })).toEqual(['body', 'code_verifier']);
  });

  it('will not issue a code for another provider\'s identity or to a redirect URI not allowed', async () => {
    const challenge = pkcePair().challenge;
    await expect(identity.issueAuthorizationCode({ provider: 'github', subject: '1', email: null }, { redirectUri: REDIRECT, codeChallenge: challenge, state: null })).rejects.toThrow(/github/);
    await expect(identity.issueAuthorizationCode({ provider: 'builtin', subject: 'usr_x', email: null }, { redirectUri: 'https://evil.example/', codeChallenge: challenge, state: null })).rejects.toThrow(/not allowed/);
  });
});

describe('sign-up of an address that has an account', () => {
  it('mails a confirmed account a notice instead of a code, and changes nothing', async () => {
    const email = address('notice');
    await confirmedUser(email);
    const before = await userRow(email);
    await identity.signUp(email, OTHER);
    await identity.idle();
    const last = outbox.to(email).at(-1)!;
    expect(last.subject).toBe('You already have a gpu-control-plane account');
    expect(last.text).toMatch(/forgot-password/);
    expect(last.text).not.toMatch(/\d{6}/);
    expect(await userRow(email)).toEqual(before);
    expect(await codeRows(email)).toEqual([]);
  });

  it('keeps a still unconfirmed account\'s first password and code, and mails a notice without a code', async () => {
    const email = address('again');
    await identity.signUp(email, PASSWORD);
    const first = await confirmCode(email);
    const before = await userRow(email);
    await identity.signUp(email, OTHER);
    await identity.idle();
    const last = outbox.to(email).at(-1)!;
    expect(last.subject).toBe('Someone tried to sign up again with your address');
    expect(last.text).toMatch(/forgot-password/);
    expect(last.text).not.toMatch(/\d{6}/);
    expect(await userRow(email)).toEqual(before);
    await identity.confirmEmail(email, first);
    expect((await identity.signIn(email, PASSWORD)).kind).toBe('signed_in');
    expect((await domainErrorOf(identity.signIn(email, OTHER))).code).toBe('INVALID_CREDENTIALS');
  });

  it('forgets a sign-up nobody confirmed for 7 days, with its code: the address signs up afresh', async () => {
    const email = address('stale');
    await identity.signUp(email, PASSWORD);
    const stale = await confirmCode(email);
    const before = await userRow(email);
    clock.advance(7 * 86_400_000);
    await identity.signUp(email, OTHER);
    const fresh = await confirmCode(email);
    expect((await userRow(email)).user_id).not.toBe(before.user_id);
    if (fresh !== stale) expect((await domainErrorOf(identity.confirmEmail(email, stale))).code).toBe('INVALID_INPUT');
    await identity.confirmEmail(email, fresh);
    expect((await identity.signIn(email, OTHER)).kind).toBe('signed_in');
  });
});

describe('reset', () => {
  it('confirms an address that was never confirmed, and voids its confirmation code', async () => {
    const email = address('resetconfirms');
    await identity.signUp(email, PASSWORD);
    const confirmation = await confirmCode(email);
    await identity.forgotPassword(email);
    await identity.resetPassword(email, codeIn(await outbox.next(email, 'reset', isResetMail)), OTHER);
    expect((await identity.signIn(email, OTHER)).kind).toBe('signed_in');
    expect((await userRow(email)).status).toBe('confirmed');
    expect((await domainErrorOf(identity.confirmEmail(email, confirmation))).code).toBe('INVALID_INPUT');
  });

  it('replaces an invited person\'s temporary password', async () => {
    const email = address('resetinvite');
    await identity.invite(email);
    await identity.forgotPassword(email);
    await identity.resetPassword(email, codeIn(await outbox.next(email, 'reset', isResetMail)), OTHER);
    expect(await identity.signIn(email, OTHER)).toMatchObject({ kind: 'signed_in' });
  });

  it('sends nothing for an unknown address, and nothing for a resend to a confirmed one', async () => {
    const unknown = address('ghost');
    await identity.forgotPassword(unknown);
    await identity.resendCode(unknown);
    const confirmed = address('noresend');
    await confirmedUser(confirmed);
    const sentBefore = outbox.to(confirmed).length;
    await identity.resendCode(confirmed);
    await identity.idle();
    expect(outbox.to(unknown)).toEqual([]);
    expect(outbox.to(confirmed)).toHaveLength(sentBefore);
  });
});

describe('invitations', () => {
  it('mails a temporary password that passes the policy, and counts the address as confirmed', async () => {
    const email = address('invitemail');
    const invited = await identity.invite(email);
    await identity.idle();
    const mail = outbox.to(email).at(-1)!;
    expect(mail.subject).toBe('You are invited to gpu-control-plane');
    const temporary = temporaryPasswordIn(mail)!;
    expect(temporary).toMatch(/^[a-z2-9]{4}(-[a-z2-9]{4}){4}$/);
    expect(mail.text.split('\n')).toContain(`Temporary password: ${temporary}`);
    expect(await userRow(email)).toMatchObject({ user_id: invited.subject, status: 'new_password_required' });
    // confirmed already: no confirmation code is pending or resent
    await identity.resendCode(email);
    await identity.idle();
    expect(outbox.to(email)).toHaveLength(1);
  });

  it('gives each invitation its own temporary password', async () => {
    const passwords = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const email = address('invitemany');
      await identity.invite(email);
      await identity.idle();
      passwords.add(temporaryPasswordIn(outbox.to(email).at(-1)!)!);
    }
    expect(passwords.size).toBe(5);
  });

  it('takes over an address that signed up and never confirmed: its password and codes stop working', async () => {
    const email = address('squatted');
    await identity.signUp(email, PASSWORD);
    const squatterCode = await confirmCode(email);
    const before = await userRow(email);
    const invited = await identity.invite(email);
    expect(invited.subject).toBe(before.user_id);
    expect(await codeRows(email)).toEqual([]);
    expect((await domainErrorOf(identity.signIn(email, PASSWORD))).code).toBe('INVALID_CREDENTIALS');
    expect((await domainErrorOf(identity.confirmEmail(email, squatterCode))).code).toBe('INVALID_INPUT');
    await identity.idle();
    const step = await identity.signIn(email, temporaryPasswordIn(outbox.to(email).at(-1)!)!);
    expect(step.kind).toBe('new_password_required');
  });

  it('with mail: false makes the account and mails nothing; inviting again mails a fresh temporary password', async () => {
    const email = address('unmailed');
    const invited = await identity.invite(email, { mail: false });
    await identity.idle();
    expect(outbox.to(email)).toEqual([]);
    expect(await userRow(email)).toMatchObject({ user_id: invited.subject, status: 'new_password_required' });
    expect(await identity.invite(email)).toEqual(invited);
    await identity.idle();
    expect(temporaryPasswordIn(outbox.to(email).at(-1)!)).not.toBeNull();
  });
});

describe('mail in the background', () => {
  /** A mailer that holds every message until released, like a slow SMTP relay. */
  class SlowMailer implements Mailer {
    readonly pending: { mail: Mail; release: () => void }[] = [];
    send(mail: Mail): Promise<void> {
      return new Promise((resolve) => this.pending.push({ mail, release: resolve }));
    }
  }

  it('answers before the mail has left, and the mail leaves at once (within 10 s)', async () => {
    const slow = new SlowMailer();
    const other = createBuiltinIdentity({ database: storage, clock, mailer: slow, publicUrl: 'https://cp.example' });
    const email = address('slow');
    const started = performance.now();
    await other.signUp(email, PASSWORD);
    await other.forgotPassword(email);
    expect(performance.now() - started).toBeLessThan(5_000);
    await new Promise((resolve) => setImmediate(resolve));
    // handed to the mailer already, not queued for later
    expect(slow.pending.map((p) => p.mail.to)).toEqual([email, email]);
    for (const p of slow.pending) p.release();
    await other.idle();
  });

  it('reports a mail that failed to the injected callback, without the code, and still answers', async () => {
    const failing = new MailOutbox();
    failing.failing = new Error('SMTP relay down');
    const reports: { error: unknown; mail: { to: string; subject: string } }[] = [];
    const other = createBuiltinIdentity({ database: storage, clock, mailer: failing, publicUrl: 'https://cp.example', onMailError: (error, mail) => reports.push({ error, mail }) });
    const email = address('failing');
    expect(await other.signUp(email, PASSWORD)).toEqual({ destination: expect.stringMatching(/^f\*\*\*@e\*\*\*\.com$/) });
    await other.idle();
    expect(reports).toEqual([{ error: failing.failing, mail: { to: email, subject: 'Your gpu-control-plane confirmation code' } }]);
    expect(mailErrors).toEqual([]);
  });
});

describe('mail through a real SMTP server', () => {
  it('the confirmation code reaches the mailbox within 10 s of the sign-up, and confirms', async () => {
    const inbox = await startSmtpInbox({ user: 'cp', pass: 'relay-secret' });
    const mailer = createMailer({ smtpUrl: inbox.url, from: 'gpu-control-plane <no-reply@cp.example>', logger: pino({ level: 'silent' }) });
    const errors: unknown[] = [];
    const other = createBuiltinIdentity({ database: storage, clock, mailer, publicUrl: 'https://cp.example', onMailError: (error) => errors.push(error) });
    try {
      const email = address('smtp');
      const asked = performance.now();
      await other.signUp(email, PASSWORD);
      const mail = await inbox.next((m) => m.envelopeTo.includes(email), 10_000);
      expect(performance.now() - asked).toBeLessThan(10_000);
      expect(mail).toMatchObject({ envelopeFrom: 'no-reply@cp.example', from: expect.stringMatching(/^"?gpu-control-plane"? <no-reply@cp\.example>$/), subject: 'Your gpu-control-plane confirmation code', user: 'cp' });
      const code = /code is (\d{6})\./.exec(mail.text)?.[1];
      expect(code).toMatch(/^\d{6}$/);
      await other.confirmEmail(email, code!);
      expect((await other.signIn(email, PASSWORD)).kind).toBe('signed_in');
      expect(errors).toEqual([]);
    } finally {
      await other.idle();
      await inbox.close();
    }
  });
});

describe('the same answer in the same time for known and unknown addresses', () => {
  const median = (values: number[]) => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)]!;
  /** Alternates the two kinds so drift in the machine's load hits both alike. */
  const timeBoth = async (rounds: number, known: (i: number) => Promise<unknown>, unknown: (i: number) => Promise<unknown>) => {
    const times = { known: [] as number[], unknown: [] as number[] };
    for (let i = 0; i < rounds; i++) {
      for (const [kind, run] of i % 2 ? ([['known', known], ['unknown', unknown]] as const) : ([['unknown', unknown], ['known', known]] as const)) {
        const started = performance.now();
        await run(i);
        times[kind].push(performance.now() - started);
      }
    }
    return { known: median(times.known), unknown: median(times.unknown) };
  };

  it('sign-up, forgot and sign-in take the same work whether or not the address has an account (medians printed)', async () => {
    const known = Array.from({ length: 3 }, () => address('timed'));
    for (const email of known) await confirmedUser(email);
    const rounds = 30;
    const figures = {
      signUp: await timeBoth(rounds, (i) => identity.signUp(known[i % 3]!, OTHER), () => identity.signUp(address('timednew'), OTHER)),
      forgot: await timeBoth(rounds, (i) => identity.forgotPassword(known[i % 3]!), () => identity.forgotPassword(address('timedghost'))),
      signIn: await timeBoth(rounds, (i) => identity.signIn(known[i % 3]!, OTHER).catch(() => null), () => identity.signIn(address('timedghost'), OTHER).catch(() => null)),
    };
    await identity.idle();
    console.log('known vs unknown address, median ms:', JSON.stringify(figures, (_, v: unknown) => (typeof v === 'number' ? Number(v.toFixed(2)) : v)));
    // the work is the same (argon2id hashes dominate); a generous bound, as the machine is shared
    for (const [what, { known: k, unknown: u }] of Object.entries(figures)) {
      expect(Math.abs(k - u) / Math.max(k, u), `${what}: known ${k.toFixed(1)} ms, unknown ${u.toFixed(1)} ms`).toBeLessThan(0.5);
    }
  });
});
