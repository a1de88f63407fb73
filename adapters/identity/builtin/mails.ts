import type { Mail } from '../../../core/ports/mailer.ts';

/** What the built-in provider writes to people. Plain text; each says what to do next through the API. */

export const confirmationMail = (to: string, code: string): Mail => ({
  to,
  subject: 'Your gpu-control-plane confirmation code',
  text: [
    `Your confirmation code is ${code}.`,
    '',
    'Send it with POST /v1/auth/confirm-email ({"email", "code"}) within 15 minutes to finish signing up.',
    'If you did not sign up, ignore this message: no account is opened without the code.',
  ].join('\n'),
});

export const resetMail = (to: string, code: string): Mail => ({
  to,
  subject: 'Your gpu-control-plane password reset code',
  text: [
    `Your password reset code is ${code}.`,
    '',
    'Send it with your new password to POST /v1/auth/reset-password ({"email", "code", "new_password"}) within 15 minutes.',
    'If you did not ask to reset your password, ignore this message: your password stays as it is.',
  ].join('\n'),
});

/** Sent instead of a code when someone signs up with an address that already has an account. */
export const alreadyRegisteredMail = (to: string): Mail => ({
  to,
  subject: 'You already have a gpu-control-plane account',
  text: [
    'Someone, maybe you, tried to sign up with this address, which already has an account.',
    '',
    'Sign in with your password instead. If you forgot it, ask for a reset code with POST /v1/auth/forgot-password ({"email"}).',
    'If it was not you, ignore this message: nothing has changed.',
  ].join('\n'),
});

/**
 * Sent instead of a code when someone signs up again with an address that signed up and is not confirmed
 * yet: nothing changed, and it says how the mailbox's owner gets a password of their own if the first sign-up
 * was not theirs (a reset confirms the address).
 */
export const signUpAgainMail = (to: string): Mail => ({
  to,
  subject: 'Someone tried to sign up again with your address',
  text: [
    'Someone, maybe you, tried to sign up again with this address, which signed up before and is waiting for its confirmation.',
    '',
    'Nothing was changed: the password chosen at the first sign-up stands, and the new one was not saved.',
    'If the first sign-up was yours and you know its password, confirm it: POST /v1/auth/resend-code ({"email"}) mails a code.',
    'If you do not know that password, or the first sign-up was not yours, choose your own with POST /v1/auth/forgot-password ({"email"}):',
    'the reset also confirms the address, and nobody else can sign in with it afterwards.',
    'If you did not sign up at all, ignore this message: no account is opened without a code from this mailbox.',
  ].join('\n'),
});

export const invitationMail = (to: string, temporaryPassword: string): Mail => ({
  to,
  subject: 'You are invited to gpu-control-plane',
  text: [
    'An operator opened a gpu-control-plane account for you.',
    '',
    `Email: ${to}`,
    `Temporary password: ${temporaryPassword}`,
    '',
    'Sign in with it (POST /v1/auth/sign-in, or the sign-in page); you will then choose a password of your own.',
    'It works for 7 days; after that, ask the operator who invited you for a new invitation.',
  ].join('\n'),
});
