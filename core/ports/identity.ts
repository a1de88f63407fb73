/**
 * Who a person is at an identity provider: (provider, subject) is the identity; the email is shown, never
 * used as the key (GitHub logins and addresses change, Cognito's `sub` and our user ids do not).
 */
export interface IdentityRef {
  /** The provider's name: "builtin", "cognito", "github". */
  provider: string;
  /** The provider's stable id of the person: our user id, Cognito's `sub`, GitHub's numeric user id. */
  subject: string;
  /** The verified address, when the provider has one; shown and used to name a new tenant. */
  email: string | null;
  /** The person's handle at the provider, when it has one (GitHub's login): shown, never a key (it can be renamed). */
  login?: string | null;
}

/** A code was sent (or, for an unknown address, the same answer is given as if it had been). */
export interface CodeSent {
  /** The address, masked: "a***@e***.com". */
  destination: string;
}

/** How an email sign-in ended: signed in, or one more step (a temporary password must be replaced). */
export type SignInOutcome =
  | { kind: 'signed_in'; identity: IdentityRef }
  /** `session` is an opaque, short-lived value the caller sends back with the new password. */
  | { kind: 'new_password_required'; session: string };

/**
 * An email/password identity provider: the built-in one (users in our database) or Amazon
 * Cognito. Expected outcomes are DomainErrors with these codes:
 * - INVALID_CREDENTIALS: a wrong email or password, whatever was wrong (one 401, no enumeration);
 * - CONFLICT: sign-in before the email is confirmed (the detail says how to confirm), with an invitation's
 *   expired temporary password (the detail says to ask the operator for a new invitation), or an address
 *   taken at sign-up when the provider cannot hide it;
 * - INVALID_INPUT on ['body', 'code'] / ['body', 'password'] / ['body', 'new_password']: a wrong, used, expired
 *   or voided code (a code allows 5 tries), a password the policy refuses;
 * - RATE_LIMITED (with retryAfterSeconds) when the provider itself throttles.
 * Sign-up, resend and forgot answer the same for known and unknown addresses, in the same time.
 */
export interface Identity {
  /** "builtin" or "cognito": the `provider` of the identities it returns. */
  readonly name: string;
  /** Public settings for GET /v1/auth/config (`idp`): never a secret. */
  publicConfig(): Record<string, unknown>;
  signUp(email: string, password: string): Promise<CodeSent>;
  confirmEmail(email: string, code: string): Promise<void>;
  resendCode(email: string): Promise<CodeSent>;
  signIn(email: string, password: string): Promise<SignInOutcome>;
  /** Completes a sign-in that answered new_password_required. */
  completeNewPassword(email: string, session: string, newPassword: string): Promise<IdentityRef>;
  forgotPassword(email: string): Promise<CodeSent>;
  /** Sets the new password with the mailed code; answers whose password it was, so their sessions can end. */
  resetPassword(email: string, code: string, newPassword: string): Promise<IdentityRef>;
  /** Swaps a hosted sign-in page's authorization code for the identity (OAuth 2 code, PKCE when sent). */
  exchangeCode(request: { code: string; redirectUri: string | null; codeVerifier: string | null }): Promise<IdentityRef>;
  /**
   * An operator's invitation: the user exists at once with a temporary password, mailed to them (the
   * message carries the line "Temporary password: <value>"); their first sign-in answers
   * new_password_required. The temporary password lasts 7 days (Cognito: the pool's
   * TemporaryPasswordValidityDays); signing in with an expired one is CONFLICT saying to ask for a new
   * invitation. Inviting an address whose invitation is still pending (expired or not) mails a fresh
   * temporary password and answers the same identity; CONFLICT when the address has an account in use.
   * An address that signed up and never confirmed is taken over: whoever signed up loses it, and the
   * invitation stands in its place. With `mail: false` (the address's mail allowance is spent) the account is
   * made all the same and nothing is mailed; inviting again later mails a fresh temporary password.
   */
  invite(email: string, options?: { mail?: boolean }): Promise<IdentityRef>;
}
