import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError, type ErrorCode } from '../../core/errors.ts';
import type { CodeSent, Identity, IdentityRef } from '../../core/ports/identity.ts';

/**
 * What the identity contract needs besides the adapter: the person's side of the mailbox and of the hosted
 * sign-in page, the only steps that differ from one provider to the next.
 */
export interface IdentityHarness {
  identity: Identity;
  /**
   * The next code mailed to `email` for `purpose` that this harness has not handed out yet, waiting for it
   * (mail leaves in the background, within 10 s of the request). Each mailed code is handed out once, so a
   * call after a resend answers the new code, never the old one again.
   */
  codeFor(email: string, purpose: 'confirm' | 'reset'): Promise<string>;
  /** The temporary password of the latest invitation mailed to `email` (its line "Temporary password: <value>"). */
  temporaryPasswordFor(email: string): Promise<string>;
  /**
   * The person signs in at the hosted page with `email` and `password` for the public client, which sent
   * `redirectUri` and the S256 `codeChallenge`; answers the authorization code the page redirected with.
   */
  authorizationCodeFor(email: string, password: string, request: { redirectUri: string; codeChallenge: string }): Promise<string>;
  close(): Promise<void>;
}

/** Passes every provider's policy: ours (10 to 256, not the email) and Cognito's default (classes of characters). */
const PASSWORD = 'Correct-Horse-42';
const OTHER_PASSWORD = 'Battery-Staple-77';
const WEAK_PASSWORD = 'Ab1!';
/** A loopback redirect (RFC 8252), as the CLI sends. */
const REDIRECT_URI = 'http://127.0.0.1:53682/callback';

const run = randomBytes(4).toString('hex');
let serial = 0;
/** A fresh address for one test. */
const address = (label: string): string => `${label}-${run}-${++serial}@example.com`;
/**
 * Two fresh addresses that differ only in one character in the middle of a long local part, so any mask
 * (first and last characters, domain initial) shows them the same: their answers can be compared whole.
 */
const twins = (label: string): [string, string] => {
  const n = ++serial;
  return [`${label}${run}${n}kxq${run}${n}${label}@example.com`, `${label}${run}${n}kyq${run}${n}${label}@example.com`];
};

/** The DomainError a promise rejects with (fails the test if it resolves or throws anything else). */
export async function domainErrorOf(promise: Promise<unknown>): Promise<DomainError> {
  const outcome = await promise.then(
    (value) => ({ resolved: value }),
    (error: unknown) => ({ error }),
  );
  if ('resolved' in outcome) throw new Error(`expected a DomainError, but it resolved with ${JSON.stringify(outcome.resolved)}`);
  expect(outcome.error).toBeInstanceOf(DomainError);
  return outcome.error as DomainError;
}

const expectError = async (promise: Promise<unknown>, code: ErrorCode, field?: string): Promise<DomainError> => {
  const error = await domainErrorOf(promise);
  expect({ code: error.code, message: error.message }).toMatchObject({ code });
  if (field) expect(error.problems.map((p) => p.loc)).toContainEqual(['body', field]);
  return error;
};

const expectCodeSent = (sent: CodeSent, email: string): void => {
  expect(Object.keys(sent)).toEqual(['destination']);
  expect(typeof sent.destination).toBe('string');
  expect(sent.destination.length).toBeGreaterThan(0);
  // masked: it never repeats the whole address or the whole local part
  expect(sent.destination.toLowerCase()).not.toContain(email.toLowerCase());
  expect(sent.destination.toLowerCase()).not.toContain(email.split('@')[0]!.toLowerCase());
};

/** A PKCE pair (RFC 7636): a 43-character verifier and its S256 challenge. */
export const pkcePair = (): { verifier: string; challenge: string } => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

/** Where a provider, as it really behaves, cannot keep one of the rules below: each one named and asserted. */
export interface IdentityContractOptions {
  /**
   * Cognito answers UserNotConfirmedException before it checks the password (AWS calls the order intended),
   * so its 409 for an unconfirmed account comes with a wrong password too.
   */
  unconfirmedWhateverThePassword?: boolean;
}

/** The behaviour every email/password identity provider must show: the built-in one and Amazon Cognito. */
export function identityContract(name: string, open: () => Promise<IdentityHarness>, options: IdentityContractOptions = {}): void {
  describe(`identity contract: ${name}`, () => {
    let harness: IdentityHarness;
    let identity: Identity;

    beforeAll(async () => {
      harness = await open();
      identity = harness.identity;
    });
    afterAll(async () => {
      await harness?.close();
    });

    /** Signs up and confirms `email`; answers the identity of its first sign-in. */
    const confirmedUser = async (email: string, password = PASSWORD): Promise<IdentityRef> => {
      await identity.signUp(email, password);
      await identity.confirmEmail(email, await harness.codeFor(email, 'confirm'));
      const outcome = await identity.signIn(email, password);
      if (outcome.kind !== 'signed_in') throw new Error(`expected signed_in, got ${outcome.kind}`);
      return outcome.identity;
    };

    const signedIn = async (email: string, password: string): Promise<IdentityRef> => {
      const outcome = await identity.signIn(email, password);
      expect(outcome.kind).toBe('signed_in');
      return (outcome as { identity: IdentityRef }).identity;
    };

    describe('settings', () => {
      it('is named, and its public configuration says which provider it is and holds no secret', () => {
        expect(identity.name).toBe(name);
        const config = identity.publicConfig();
        expect(config.kind).toBe(name);
        const json = JSON.stringify(config);
        expect(JSON.parse(json)).toEqual(config);
        expect(json).not.toMatch(/secret|password/i);
      });
    });

    describe('sign-up, confirmation, sign-in', () => {
      it('mails a 6-digit code; once confirmed the person signs in as (provider, subject) with the address', async () => {
        const email = address('signup');
        expectCodeSent(await identity.signUp(email, PASSWORD), email);
        const code = await harness.codeFor(email, 'confirm');
        expect(code).toMatch(/^\d{6}$/);
        await identity.confirmEmail(email, code);
        const first = await signedIn(email, PASSWORD);
        expect(first).toEqual({ provider: name, subject: expect.any(String), email });
        expect(first.subject.length).toBeGreaterThan(0);
        // the subject is stable: a second sign-in is the same identity
        expect(await signedIn(email, PASSWORD)).toEqual(first);
      });

      it('treats the address case-insensitively: the same person whatever the capitals', async () => {
        const email = address('casing');
        const person = await confirmedUser(email);
        expect((await signedIn(email.toUpperCase(), PASSWORD)).subject).toBe(person.subject);
      });

      it('refuses a sign-up whose password the policy refuses, on the password field', async () => {
        const email = address('weak');
        await expectError(identity.signUp(email, WEAK_PASSWORD), 'INVALID_INPUT', 'password');
      });

      it('refuses to sign in before the email is confirmed (409 saying how), with the right password only', async () => {
        const email = address('unconfirmed');
        await identity.signUp(email, PASSWORD);
        const conflict = await expectError(identity.signIn(email, PASSWORD), 'CONFLICT');
        expect(conflict.message).toMatch(/confirm-email/);
        expect(conflict.message).toMatch(/resend-code/);
        // a wrong password does not reveal that an unconfirmed account exists (where the provider allows)
        await expectError(identity.signIn(email, OTHER_PASSWORD), options.unconfirmedWhateverThePassword ? 'CONFLICT' : 'INVALID_CREDENTIALS');
      });

      it('answers one INVALID_CREDENTIALS for a wrong password and an unknown email alike', async () => {
        const email = address('wrongpw');
        await confirmedUser(email);
        const wrongPassword = await expectError(identity.signIn(email, OTHER_PASSWORD), 'INVALID_CREDENTIALS');
        const unknownEmail = await expectError(identity.signIn(address('nobody'), PASSWORD), 'INVALID_CREDENTIALS');
        expect(unknownEmail.message).toBe(wrongPassword.message);
      });
    });

    describe('codes', () => {
      /** A code that is not `code`: the same length, one digit changed. */
      const wrong = (code: string): string => `${code.slice(0, 5)}${(Number(code[5]) + 1) % 10}`;

      it('refuses a wrong code on the code field, and the right one still works after it', async () => {
        const email = address('wrongcode');
        await identity.signUp(email, PASSWORD);
        const code = await harness.codeFor(email, 'confirm');
        await expectError(identity.confirmEmail(email, wrong(code)), 'INVALID_INPUT', 'code');
        await expectError(identity.signIn(email, PASSWORD), 'CONFLICT');
        await identity.confirmEmail(email, code);
        await signedIn(email, PASSWORD);
      });

      it('refuses a code that is not 6 digits, and a code for an unknown address, the same way', async () => {
        const email = address('badcode');
        await identity.signUp(email, PASSWORD);
        await expectError(identity.confirmEmail(email, 'abcdef'), 'INVALID_INPUT', 'code');
        await expectError(identity.confirmEmail(address('ghost'), '123456'), 'INVALID_INPUT', 'code');
      });

      it('uses a code once', async () => {
        const email = address('reuse');
        await identity.signUp(email, PASSWORD);
        const code = await harness.codeFor(email, 'confirm');
        await identity.confirmEmail(email, code);
        await expectError(identity.confirmEmail(email, code), 'INVALID_INPUT', 'code');
        await signedIn(email, PASSWORD);
      });

      it('voids a code after 5 wrong tries: the right one is refused, a new one works', async () => {
        const email = address('tries');
        await identity.signUp(email, PASSWORD);
        const code = await harness.codeFor(email, 'confirm');
        for (let i = 0; i < 5; i++) await expectError(identity.confirmEmail(email, wrong(code)), 'INVALID_INPUT', 'code');
        const sixth = await domainErrorOf(identity.confirmEmail(email, code));
        expect(['INVALID_INPUT', 'RATE_LIMITED']).toContain(sixth.code);
        await expectError(identity.signIn(email, PASSWORD), 'CONFLICT');

        expectCodeSent(await identity.resendCode(email), email);
        await identity.confirmEmail(email, await harness.codeFor(email, 'confirm'));
        await signedIn(email, PASSWORD);
      });

      it('voids the old code when a new one is sent', async () => {
        const email = address('resend');
        await identity.signUp(email, PASSWORD);
        const old = await harness.codeFor(email, 'confirm');
        await identity.resendCode(email);
        const fresh = await harness.codeFor(email, 'confirm');
        if (fresh !== old) await expectError(identity.confirmEmail(email, old), 'INVALID_INPUT', 'code');
        await identity.confirmEmail(email, fresh);
        await signedIn(email, PASSWORD);
      });
    });

    describe('answers that do not tell whether an address has an account', () => {
      it('sign-up: an address with a confirmed account answers exactly like a new one, and keeps its password', async () => {
        const [known, fresh] = twins('signuptwin');
        const person = await confirmedUser(known);
        const again = await identity.signUp(known, OTHER_PASSWORD);
        const first = await identity.signUp(fresh, PASSWORD);
        expect(again).toEqual(first);
        expectCodeSent(again, known);
        expect((await signedIn(known, PASSWORD)).subject).toBe(person.subject);
        await expectError(identity.signIn(known, OTHER_PASSWORD), 'INVALID_CREDENTIALS');
      });

      it('resend: unknown, unconfirmed and confirmed addresses get the same answer', async () => {
        const [unconfirmed, unknown] = twins('resendtwin');
        await identity.signUp(unconfirmed, PASSWORD);
        const [confirmed, unknown2] = twins('resendtwin2');
        await confirmedUser(confirmed);
        expect(await identity.resendCode(unconfirmed)).toEqual(await identity.resendCode(unknown));
        expect(await identity.resendCode(confirmed)).toEqual(await identity.resendCode(unknown2));
        expectCodeSent(await identity.resendCode(unknown), unknown);
      });

      it('forgot: a known and an unknown address get the same answer', async () => {
        const [known, unknown] = twins('forgottwin');
        await confirmedUser(known);
        const answers = [await identity.forgotPassword(known), await identity.forgotPassword(unknown)];
        expect(answers[0]).toEqual(answers[1]);
        expectCodeSent(answers[1]!, unknown);
      });

      it('reset: a code for an unknown address is refused like a wrong one', async () => {
        const email = address('resetghost');
        await identity.forgotPassword(email);
        await expectError(identity.resetPassword(email, '123456', OTHER_PASSWORD), 'INVALID_INPUT', 'code');
      });
    });

    describe('forgot and reset', () => {
      it('mails a reset code; the reset sets the password, the old one stops working', async () => {
        const email = address('reset');
        const person = await confirmedUser(email);
        expectCodeSent(await identity.forgotPassword(email), email);
        const code = await harness.codeFor(email, 'reset');
        expect(code).toMatch(/^\d{6}$/);
        // the reset names whose password it set: the host ends that identity's console sessions
        expect(await identity.resetPassword(email, code, OTHER_PASSWORD)).toEqual(person);
        expect((await signedIn(email, OTHER_PASSWORD)).subject).toBe(person.subject);
        await expectError(identity.signIn(email, PASSWORD), 'INVALID_CREDENTIALS');
      });

      it('refuses a wrong code, a used code and a weak new password', async () => {
        const email = address('resetrules');
        await confirmedUser(email);
        await identity.forgotPassword(email);
        const code = await harness.codeFor(email, 'reset');
        const wrongCode = `${code.slice(0, 5)}${(Number(code[5]) + 1) % 10}`;
        await expectError(identity.resetPassword(email, wrongCode, OTHER_PASSWORD), 'INVALID_INPUT', 'code');
        await expectError(identity.resetPassword(email, code, WEAK_PASSWORD), 'INVALID_INPUT', 'new_password');
        await signedIn(email, PASSWORD);
        await identity.resetPassword(email, code, OTHER_PASSWORD);
        await expectError(identity.resetPassword(email, code, 'Third-Password-99'), 'INVALID_INPUT', 'code');
        await signedIn(email, OTHER_PASSWORD);
      });
    });

    describe('invitations', () => {
      it('the invited person exists at once; the temporary password asks for a new one, which then signs in', async () => {
        const email = address('invite');
        const invited = await identity.invite(email);
        expect(invited).toEqual({ provider: name, subject: expect.any(String), email });

        const temporary = await harness.temporaryPasswordFor(email);
        expect(temporary.length).toBeGreaterThanOrEqual(10);
        await expectError(identity.signIn(email, OTHER_PASSWORD), 'INVALID_CREDENTIALS');

        const weakStep = await identity.signIn(email, temporary);
        expect(weakStep).toEqual({ kind: 'new_password_required', session: expect.any(String) });
        const weakSession = (weakStep as { session: string }).session;
        await expectError(identity.completeNewPassword(email, weakSession, WEAK_PASSWORD), 'INVALID_INPUT', 'new_password');

        const step = await identity.signIn(email, temporary);
        if (step.kind !== 'new_password_required') throw new Error('expected new_password_required');
        await expectError(identity.completeNewPassword(email, `${step.session}x`, OTHER_PASSWORD), 'INVALID_CREDENTIALS');
        const completed = await identity.completeNewPassword(email, step.session, OTHER_PASSWORD);
        expect(completed).toEqual(invited);

        expect(await signedIn(email, OTHER_PASSWORD)).toEqual(invited);
        await expectError(identity.signIn(email, temporary), 'INVALID_CREDENTIALS');
        // the session was used
        await expectError(identity.completeNewPassword(email, step.session, 'Third-Password-99'), 'INVALID_CREDENTIALS');
        await signedIn(email, OTHER_PASSWORD);
      });

      it('refuses to invite an address that has an account, or whose invitation was taken up', async () => {
        const email = address('invitetaken');
        await confirmedUser(email);
        await expectError(identity.invite(email), 'CONFLICT');
        await expectError(identity.invite(email.toUpperCase()), 'CONFLICT');
        const accepted = address('inviteaccepted');
        await identity.invite(accepted);
        const step = await identity.signIn(accepted, await harness.temporaryPasswordFor(accepted));
        if (step.kind !== 'new_password_required') throw new Error('expected new_password_required');
        await identity.completeNewPassword(accepted, step.session, OTHER_PASSWORD);
        await expectError(identity.invite(accepted), 'CONFLICT');
      });

      it('takes over an address that signed up and never confirmed: the sign-up\'s password stops working, the invitation stands', async () => {
        const email = address('invitesquatted');
        await identity.signUp(email, OTHER_PASSWORD);
        const invited = await identity.invite(email);
        expect(invited).toEqual({ provider: name, subject: expect.any(String), email });
        await expectError(identity.signIn(email, OTHER_PASSWORD), 'INVALID_CREDENTIALS');
        const step = await identity.signIn(email, await harness.temporaryPasswordFor(email));
        if (step.kind !== 'new_password_required') throw new Error('expected new_password_required');
        expect(await identity.completeNewPassword(email, step.session, PASSWORD)).toEqual(invited);
        expect(await signedIn(email, PASSWORD)).toEqual(invited);
      });

      it('inviting a pending invitation again mails a fresh temporary password for the same person; the old one stops working', async () => {
        const email = address('invitetwice');
        const first = await identity.invite(email);
        const oldTemporary = await harness.temporaryPasswordFor(email);
        expect(await identity.invite(email)).toEqual(first);
        const temporary = await harness.temporaryPasswordFor(email);
        expect(temporary).not.toBe(oldTemporary);
        await expectError(identity.signIn(email, oldTemporary), 'INVALID_CREDENTIALS');
        const step = await identity.signIn(email, temporary);
        if (step.kind !== 'new_password_required') throw new Error('expected new_password_required');
        expect(await identity.completeNewPassword(email, step.session, OTHER_PASSWORD)).toEqual(first);
      });
    });

    describe('hosted sign-in page: authorization code with PKCE', () => {
      it('swaps the code, with its redirect URI and verifier, for the identity; once', async () => {
        const email = address('exchange');
        const person = await confirmedUser(email);
        const pkce = pkcePair();
        const code = await harness.authorizationCodeFor(email, PASSWORD, { redirectUri: REDIRECT_URI, codeChallenge: pkce.challenge });
        const request = { code, redirectUri: REDIRECT_URI, codeVerifier: pkce.verifier };
        expect(await identity.exchangeCode(request)).toEqual(person);
        await expectError(identity.exchangeCode(request), 'INVALID_INPUT');
      });

      it('refuses an unknown code, a wrong verifier, a missing verifier and another redirect URI', async () => {
        const email = address('exchangebad');
        await confirmedUser(email);
        await expectError(identity.exchangeCode({ code: randomBytes(24).toString('base64url'), redirectUri: REDIRECT_URI, codeVerifier: pkcePair().verifier }), 'INVALID_INPUT');

        const cases: { why: string; with: (verifier: string) => { redirectUri: string; codeVerifier: string | null } }[] = [
          { why: 'another verifier', with: () => ({ redirectUri: REDIRECT_URI, codeVerifier: pkcePair().verifier }) },
          { why: 'no verifier', with: () => ({ redirectUri: REDIRECT_URI, codeVerifier: null }) },
          { why: 'another redirect URI', with: (verifier) => ({ redirectUri: 'http://127.0.0.1:53682/elsewhere', codeVerifier: verifier }) },
        ];
        for (const bad of cases) {
          const pkce = pkcePair();
          const code = await harness.authorizationCodeFor(email, PASSWORD, { redirectUri: REDIRECT_URI, codeChallenge: pkce.challenge });
          const refused = await expectError(identity.exchangeCode({ code, ...bad.with(pkce.verifier) }), 'INVALID_INPUT');
          expect({ why: bad.why, at: refused.problems[0]?.loc[0] }).toEqual({ why: bad.why, at: 'body' });
        }
      });
    });
  });
}
