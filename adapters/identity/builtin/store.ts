export type UserStatus = 'unconfirmed' | 'confirmed' | 'new_password_required';
export type CodePurpose = 'confirm' | 'reset';

/** A person of the built-in provider. `email` is normalized (trimmed, lower-cased). */
export interface UserRecord {
  userId: string;
  email: string;
  passwordHash: string;
  status: UserStatus;
  /** When an invitation's temporary password stops working; null when no invitation is pending. */
  temporaryPasswordExpiresAt: Date | null;
}

export interface AuthorizationCodeRecord {
  userId: string;
  redirectUri: string;
  codeChallenge: string;
  expiresAt: Date;
}

/**
 * Where the built-in provider keeps people and their pending secrets: the control plane's database (migration
 * 0008). Each change two requests could race on is one statement, so a code or a session is used once and a
 * code's tries are counted once, whichever replica answers.
 */
export interface BuiltinStore {
  userByEmail(email: string): Promise<UserRecord | null>;
  userById(userId: string): Promise<UserRecord | null>;
  /** Forgets unconfirmed sign-ups made at or before `before` (of `email` alone, when given), with their codes. */
  forgetUnconfirmed(before: Date, email?: string): Promise<void>;
  /** Adds the person unless the address has an account already (false then). */
  addUser(user: UserRecord, at: Date): Promise<boolean>;
  /**
   * Renews a pending invitation of the person at `email` (status new_password_required), or takes over a
   * sign-up never confirmed (status unconfirmed): the status becomes new_password_required, the temporary
   * password and its expiry these, and the person's codes and new-password sessions are voided. Answers the
   * person, or null when the address has no pending invitation nor unconfirmed sign-up.
   */
  renewInvitation(email: string, passwordHash: string, expiresAt: Date, at: Date): Promise<UserRecord | null>;
  /**
   * Stores a new code for the person at `email` if their status is one of `statuses`, replacing (voiding) an
   * earlier code for the same purpose. Never changes a password: an unconfirmed sign-up keeps the password it
   * was made with. Answers the user id, or null when nobody matched (unknown address, other status).
   */
  putCode(email: string, statuses: readonly UserStatus[], code: { purpose: CodePurpose; hash: string; tries: number; expiresAt: Date }): Promise<string | null>;
  /** Takes one try of the person's live code for `purpose`: its hash, or null when none is left to try. */
  takeCodeTry(email: string, purpose: CodePurpose, now: Date): Promise<{ userId: string; codeHash: string } | null>;
  /** Uses the confirmation code (if still the one with `codeHash`) and confirms the address, in one step. */
  confirmWithCode(userId: string, codeHash: string, at: Date): Promise<boolean>;
  /**
   * Uses the reset code (if still the one with `codeHash`), sets the password and counts the address as
   * confirmed, voiding the person's other codes and new-password sessions, in one step.
   */
  resetWithCode(userId: string, codeHash: string, passwordHash: string, at: Date): Promise<UserRecord | null>;
  /** Replaces a password hash made with older parameters, unless the password changed meanwhile. */
  rehash(userId: string, from: string, to: string): Promise<void>;
  addPasswordSession(digest: string, userId: string, expiresAt: Date, now: Date): Promise<void>;
  /**
   * Uses a live new-password session of the person at `email` and sets their password, confirming them, in
   * one step; null when the session is unknown, used, expired, another person's, or they need no new password.
   */
  completeNewPassword(email: string, sessionDigest: string, passwordHash: string, now: Date): Promise<UserRecord | null>;
  addAuthorizationCode(digest: string, record: AuthorizationCodeRecord, now: Date): Promise<void>;
  /** Removes the code and answers what it was bound to: a code is tried once, whatever the outcome. */
  takeAuthorizationCode(digest: string): Promise<AuthorizationCodeRecord | null>;
}
