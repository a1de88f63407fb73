import type { CodeSent } from '../ports/identity.ts';
import { askIdentity, codeTry, mayMail, type SignInContext } from './sign-in-context.ts';

/** An email account: the provider mails a confirmation code (within the address's mail allowance). */
export function signUp(ctx: SignInContext, email: string, password: string): Promise<CodeSent> {
  return mayMail(ctx, email, () => askIdentity(ctx, 'sign up', () => ctx.identity.signUp(email, password)));
}

export function resendCode(ctx: SignInContext, email: string): Promise<CodeSent> {
  return mayMail(ctx, email, () => askIdentity(ctx, 'send a code', () => ctx.identity.resendCode(email)));
}

/** The mailed code confirms the address, tried in a slot of its wrong-code allowance. */
export function confirmEmail(ctx: SignInContext, email: string, code: string): Promise<void> {
  return codeTry(ctx, email, () => askIdentity(ctx, 'confirm the email', () => ctx.identity.confirmEmail(email, code)));
}

/** A forgotten password: the provider mails a code to set a new one. */
export function forgotPassword(ctx: SignInContext, email: string): Promise<CodeSent> {
  return mayMail(ctx, email, () => askIdentity(ctx, 'send a code', () => ctx.identity.forgotPassword(email)));
}

/**
 * A new password with the mailed code; then every console session issued to that person ends (in every tenant, with
 * the tokens those sessions issued): whoever stole a session loses it with the old password.
 */
export async function resetPassword(ctx: SignInContext, email: string, code: string, newPassword: string): Promise<void> {
  const identity = await codeTry(ctx, email, () => askIdentity(ctx, 'reset the password', () => ctx.identity.resetPassword(email, code, newPassword)));
  await ctx.tenancy.endSessionsOf(identity);
}
