import { randomBytes, randomInt } from 'node:crypto';
import { DomainError, invalidInput } from '../../../core/errors.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { CodeSent, Identity, IdentityRef, SignInOutcome } from '../../../core/ports/identity.ts';
import type { Mailer } from '../../../core/ports/mailer.ts';
import { BackgroundMail, type MailErrorReporter } from '../../../core/identity/background-mail.ts';
import { RandomIds } from '../../crypto/node-secrets.ts';
import { addressOf, maskAddress, normalizeEmail } from './addresses.ts';
import {
  AUTHORIZATION_CODE_TTL_MS,
  CLIENT_ID,
  readAuthorizationRequest,
  RedirectPolicy,
  type AuthorizationRequest,
} from './authorization-request.ts';
import { CODE_FORM, CODE_TRIES, CODE_TTL_MS, newCode } from './codes.ts';
import { alreadyRegisteredMail, confirmationMail, invitationMail, resetMail, signUpAgainMail } from './mails.ts';
import { checkPassword, hashSecret, matchesHash, needsRehash } from './passwords.ts';
import type { BuiltinStore, CodePurpose, UserRecord, UserStatus } from './store.ts';
import { digestOf, newOpaque, verifierMatches } from './tokens.ts';

export const NEW_PASSWORD_SESSION_TTL_MS = 10 * 60_000;
/** An invitation's temporary password lasts 7 days, as Cognito's TemporaryPasswordValidityDays default. */
export const TEMPORARY_PASSWORD_TTL_MS = 7 * 86_400_000;
/** A sign-up nobody confirmed is forgotten after 7 days: the address is free again for anyone to sign up. */
export const UNCONFIRMED_TTL_MS = 7 * 86_400_000;

/** Called with a mail that could not be sent (it left in the background, after the request was answered). */
export type { MailErrorReporter };

export interface BuiltinIdentityOptions {
  store: BuiltinStore;
  clock: Clock;
  mailer: Mailer;
  /** Where this server is reached: the hosted page's address, and an origin redirect URIs may use. */
  publicUrl: string;
  /** Further redirect URIs allowed, matched exactly (AUTH_REDIRECT_URIS). */
  redirectUris?: readonly string[];
  onMailError?: MailErrorReporter;
}

const WRONG_CREDENTIALS = 'wrong email or password; if you forgot the password, POST /v1/auth/forgot-password ({"email"}) mails a reset code';
const NOT_CONFIRMED =
  'this email address is not confirmed yet: send the 6-digit code we emailed to POST /v1/auth/confirm-email ({"email", "code"}); ' +
  'POST /v1/auth/resend-code ({"email"}) mails a new code';
const WRONG_CODE: Record<CodePurpose, string> = {
  confirm: 'wrong, used or expired code (a code lasts 15 minutes and allows 5 tries); POST /v1/auth/resend-code ({"email"}) mails a new one',
  reset: 'wrong, used or expired code (a code lasts 15 minutes and allows 5 tries); POST /v1/auth/forgot-password ({"email"}) mails a new one',
};
const INVITATION_EXPIRED =
  'this invitation\'s temporary password has expired (it lasts 7 days): ask the operator who invited you for a new invitation, ' +
  'which mails a fresh temporary password';
const WRONG_SESSION = 'the new-password session is unknown, used or expired (it lasts 10 minutes); sign in again with the temporary password';

/** 20 characters from an alphabet without look-alikes, in groups of 4: about 99 random bits, easy to type. */
const TEMPORARY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
function temporaryPassword(): string {
  const chars = Array.from({ length: 20 }, () => TEMPORARY_ALPHABET[randomInt(TEMPORARY_ALPHABET.length)]);
  return chars.join('').replace(/(.{4})(?=.)/g, '$1-');
}

/**
 * The embedded identity provider: people in our database (migration 0008), passwords and one-time codes
 * hashed with argon2id, codes mailed through the Mailer. Every answer that could tell whether an address has
 * an account (sign-up, resend, forgot, a wrong password) is the same for both and costs the same work.
 * Mail leaves in the background, never awaited by the request: its timing reveals nothing either.
 */
export class BuiltinIdentity implements Identity {
  readonly name = 'builtin';
  private readonly store: BuiltinStore;
  private readonly clock: Clock;
  private readonly publicUrl: string;
  private readonly redirects: RedirectPolicy;
  /** Mail leaves in the background: the request is answered now, a failure is reported. */
  private readonly mail: BackgroundMail;
  private readonly ids = new RandomIds();
  private dummyHash: Promise<string> | undefined;
  private lastForgotten = Number.NEGATIVE_INFINITY;

  constructor(options: BuiltinIdentityOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.publicUrl = options.publicUrl.replace(/\/+$/, '');
    this.redirects = new RedirectPolicy(this.publicUrl, options.redirectUris ?? []);
    this.mail = new BackgroundMail(options.mailer, options.onMailError);
  }

  publicConfig(): Record<string, unknown> {
    return { kind: 'builtin', authorize_url: `${this.publicUrl}/auth/authorize`, client_id: CLIENT_ID, code_challenge_method: 'S256' };
  }

  async signUp(email: string, password: string): Promise<CodeSent> {
    const address = addressOf(email);
    checkPassword(password, address, 'password');
    const [passwordHash, code] = await Promise.all([hashSecret(password), newCode()]);
    const now = this.clock.now();
    await this.forgetStaleSignUps(now, address);
    const created = await this.store.addUser({ userId: this.ids.newId('usr'), email: address, passwordHash, status: 'unconfirmed', temporaryPasswordExpiresAt: null }, now);
    // one more statement either way. A new account gets its code. An existing one changes nothing (the first
    // password stands: whoever signed up first keeps it until a reset from the mailbox replaces it) and is told
    // by mail: one waiting for confirmation that someone tried again, a confirmed or invited one that it exists
    if (created && (await this.store.putCode(address, ['unconfirmed'], this.codeRecord('confirm', code.hash, now)))) {
      this.mail.send(confirmationMail(address, code.code));
    } else if (!created) {
      const existing = await this.store.userByEmail(address);
      this.mail.send(existing?.status === 'unconfirmed' ? signUpAgainMail(address) : alreadyRegisteredMail(address));
    }
    return this.sent(address);
  }

  async confirmEmail(email: string, code: string): Promise<void> {
    const userId = await this.checkCode(email, 'confirm', code);
    if (!(await this.store.confirmWithCode(userId.userId, userId.codeHash, this.clock.now()))) throw invalidInput(['body', 'code'], WRONG_CODE.confirm);
  }

  async resendCode(email: string): Promise<CodeSent> {
    return this.mailCode(addressOf(email), 'confirm', ['unconfirmed']);
  }

  /**
   * Forgets sign-ups never confirmed within UNCONFIRMED_TTL (docs/decisions.md, "Unconfirmed sign-ups"):
   * the one of `address` before anything is done with the address (one statement on the address's index, the
   * same work whether or not it has an account), and every address's at most once a minute (a statement on a
   * partial index, whatever the number of people) so that nothing stays kept for addresses nobody asks about.
   */
  private async forgetStaleSignUps(now: Date, address: string): Promise<void> {
    const before = new Date(now.getTime() - UNCONFIRMED_TTL_MS);
    await this.store.forgetUnconfirmed(before, address);
    if (Math.abs(now.getTime() - this.lastForgotten) >= 60_000) {
      this.lastForgotten = now.getTime();
      await this.store.forgetUnconfirmed(before);
    }
  }

  async signIn(email: string, password: string): Promise<SignInOutcome> {
    await this.forgetStaleSignUps(this.clock.now(), normalizeEmail(email));
    const user = await this.store.userByEmail(normalizeEmail(email));
    // an unknown address costs one argon2id verification too, against a hash of nothing anyone knows
    const matches = await matchesHash(user?.passwordHash ?? (await this.dummy()), password);
    if (!user || !matches) throw new DomainError('INVALID_CREDENTIALS', WRONG_CREDENTIALS);
    if (needsRehash(user.passwordHash)) await this.store.rehash(user.userId, user.passwordHash, await hashSecret(password));
    switch (user.status) {
      case 'unconfirmed':
        throw new DomainError('CONFLICT', NOT_CONFIRMED);
      case 'new_password_required': {
        const now = this.clock.now();
        // told only to whoever knows the temporary password: it reveals nothing to a guesser
        if (user.temporaryPasswordExpiresAt !== null && user.temporaryPasswordExpiresAt.getTime() <= now.getTime()) {
          throw new DomainError('CONFLICT', INVITATION_EXPIRED);
        }
        const session = newOpaque();
        await this.store.addPasswordSession(digestOf(session), user.userId, new Date(now.getTime() + NEW_PASSWORD_SESSION_TTL_MS), now);
        return { kind: 'new_password_required', session };
      }
      case 'confirmed':
        return { kind: 'signed_in', identity: this.ref(user) };
    }
  }

  async completeNewPassword(email: string, session: string, newPassword: string): Promise<IdentityRef> {
    const address = normalizeEmail(email);
    checkPassword(newPassword, address, 'new_password');
    const passwordHash = await hashSecret(newPassword);
    const user = await this.store.completeNewPassword(address, digestOf(session), passwordHash, this.clock.now());
    if (!user) throw new DomainError('INVALID_CREDENTIALS', WRONG_SESSION);
    return this.ref(user);
  }

  async forgotPassword(email: string): Promise<CodeSent> {
    return this.mailCode(addressOf(email), 'reset', ['unconfirmed', 'confirmed', 'new_password_required']);
  }

  async resetPassword(email: string, code: string, newPassword: string): Promise<IdentityRef> {
    checkPassword(newPassword, normalizeEmail(email), 'new_password');
    const taken = await this.checkCode(email, 'reset', code);
    const passwordHash = await hashSecret(newPassword);
    const user = await this.store.resetWithCode(taken.userId, taken.codeHash, passwordHash, this.clock.now());
    if (!user) throw invalidInput(['body', 'code'], WRONG_CODE.reset);
    return this.ref(user);
  }

  async exchangeCode(request: { code: string; redirectUri: string | null; codeVerifier: string | null }): Promise<IdentityRef> {
    const bound = request.code ? await this.store.takeAuthorizationCode(digestOf(request.code)) : null;
    const refusedCode = invalidInput(['body', 'code'], 'unknown, used or expired authorization code (a code lasts 5 minutes and is used once); sign in again at the authorize_url of GET /v1/auth/config');
    if (!bound || bound.expiresAt.getTime() <= this.clock.now().getTime()) throw refusedCode;
    if (request.redirectUri !== bound.redirectUri) throw invalidInput(['body', 'redirect_uri'], 'must be the redirect_uri the sign-in page was opened with');
    if (!request.codeVerifier || !verifierMatches(request.codeVerifier, bound.codeChallenge)) {
      throw invalidInput(['body', 'code_verifier'], 'must be the PKCE code verifier whose S256 challenge the sign-in page was opened with');
    }
    const user = await this.store.userById(bound.userId);
    if (!user || user.status !== 'confirmed') throw refusedCode;
    return this.ref(user);
  }

  /**
   * A new invitation, a pending one renewed, or an address that signed up and never confirmed taken over:
   * either way a fresh temporary password for 7 days, mailed unless `mail` is false (the allowance is spent).
   */
  async invite(email: string, options: { mail?: boolean } = {}): Promise<IdentityRef> {
    const address = addressOf(email);
    const temporary = temporaryPassword();
    const passwordHash = await hashSecret(temporary);
    const now = this.clock.now();
    await this.forgetStaleSignUps(now, address);
    const expiresAt = new Date(now.getTime() + TEMPORARY_PASSWORD_TTL_MS);
    const user: UserRecord = { userId: this.ids.newId('usr'), email: address, passwordHash, status: 'new_password_required', temporaryPasswordExpiresAt: expiresAt };
    const invited = (await this.store.addUser(user, now)) ? user : await this.store.renewInvitation(address, passwordHash, expiresAt, now);
    if (!invited) {
      throw new DomainError('CONFLICT', `${address} already has an account; its owner can sign in, or reset the password with POST /v1/auth/forgot-password`);
    }
    if (options.mail !== false) this.mail.send(invitationMail(address, temporary));
    return this.ref(invited);
  }

  /** Checks the query of the hosted sign-in page (GET /auth/authorize): the request, or what is wrong with it. */
  authorizationRequest(query: Record<string, unknown>): { request: AuthorizationRequest } | { problem: string } {
    return readAuthorizationRequest(query, this.redirects);
  }

  /** An authorization code for a person the hosted page signed in: single use, 5 minutes, bound to the request. */
  async issueAuthorizationCode(identity: IdentityRef, request: AuthorizationRequest): Promise<string> {
    if (identity.provider !== this.name) throw new Error(`the built-in sign-in page cannot issue a code for a ${identity.provider} identity`);
    if (!this.redirects.allows(request.redirectUri)) throw new Error('redirect URI not allowed');
    const code = newOpaque();
    const now = this.clock.now();
    await this.store.addAuthorizationCode(
      digestOf(code),
      { userId: identity.subject, redirectUri: request.redirectUri, codeChallenge: request.codeChallenge, expiresAt: new Date(now.getTime() + AUTHORIZATION_CODE_TTL_MS) },
      now,
    );
    return code;
  }

  /** Resolves once every mail handed to the mailer so far has left or failed (tests, a graceful stop). */
  idle(): Promise<void> {
    return this.mail.idle();
  }

  private ref(user: UserRecord): IdentityRef {
    return { provider: this.name, subject: user.userId, email: user.email };
  }

  private sent(address: string): CodeSent {
    return { destination: maskAddress(address) };
  }

  private codeRecord(purpose: CodePurpose, hash: string, now: Date) {
    return { purpose, hash, tries: CODE_TRIES, expiresAt: new Date(now.getTime() + CODE_TTL_MS) };
  }

  /** A new code for whoever at `address` has one of `statuses`; the same work and answer when nobody has. */
  private async mailCode(address: string, purpose: CodePurpose, statuses: readonly UserStatus[]): Promise<CodeSent> {
    const code = await newCode();
    const now = this.clock.now();
    await this.forgetStaleSignUps(now, address);
    if (await this.store.putCode(address, statuses, this.codeRecord(purpose, code.hash, now))) {
      this.mail.send(purpose === 'confirm' ? confirmationMail(address, code.code) : resetMail(address, code.code));
    }
    return this.sent(address);
  }

  /** Spends one try of the person's code and checks it; the same work when there is no code to check. */
  private async checkCode(email: string, purpose: CodePurpose, code: string): Promise<{ userId: string; codeHash: string }> {
    if (!CODE_FORM.test(code)) throw invalidInput(['body', 'code'], `must be the 6 digits we emailed; ${WRONG_CODE[purpose]}`);
    const now = this.clock.now();
    await this.forgetStaleSignUps(now, normalizeEmail(email));
    const taken = await this.store.takeCodeTry(normalizeEmail(email), purpose, now);
    const matches = await matchesHash(taken?.codeHash ?? (await this.dummy()), code);
    if (!taken || !matches) throw invalidInput(['body', 'code'], WRONG_CODE[purpose]);
    return taken;
  }

  /** A hash of a random value made with today's parameters, to verify against when there is nobody. */
  private dummy(): Promise<string> {
    this.dummyHash ??= hashSecret(randomBytes(24).toString('base64url'));
    return this.dummyHash;
  }

}
