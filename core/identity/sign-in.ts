import type { IdentityRef, SignInOutcome } from '../ports/identity.ts';
import type { Token } from '../tenancy/token.ts';
import { isWrongPassword } from './failure-throttle.ts';
import { linkOrProvision, mayLink, type Session } from './link-or-provision.ts';
import { askIdentity, type SignInContext } from './sign-in-context.ts';

export type SignInResult = { status: 'signed_in'; session: Session } | { status: 'new_password_required'; session: string };

/** Email and password: a session (in `tenantId` for a person of several), or the new-password step of an invited user. `client`: the caller's address. */
export async function signIn(ctx: SignInContext, caller: Token | null, email: string, password: string, client: string, tenantId?: string): Promise<SignInResult> {
  await mayLink(ctx, caller);
  const outcome = await checkPassword(ctx, email, password, client);
  if (outcome.kind === 'new_password_required') return { status: 'new_password_required', session: outcome.session };
  return { status: 'signed_in', session: await linkOrProvision(ctx, caller, outcome.identity, tenantId) };
}

/**
 * The password check alone, throttled per email and client address under a per-email ceiling (FailureThrottle):
 * the hosted sign-in page uses it before it hands out an authorization code. Past a limit the answer is 429
 * until the window frees a slot, even with the right password.
 */
export function checkPassword(ctx: SignInContext, email: string, password: string, client: string): Promise<SignInOutcome> {
  return ctx.throttle.guard('password', email, client, isWrongPassword, () => askIdentity(ctx, 'sign in', () => ctx.identity.signIn(email, password)));
}

/** An invited user's new password, then a session. */
export async function completeNewPassword(ctx: SignInContext, caller: Token | null, email: string, session: string, newPassword: string): Promise<Session> {
  await mayLink(ctx, caller);
  return linkOrProvision(ctx, caller, await setNewPassword(ctx, email, session, newPassword));
}

/** The new-password step alone: the hosted sign-in page uses it before it hands out an authorization code. */
export function setNewPassword(ctx: SignInContext, email: string, session: string, newPassword: string): Promise<IdentityRef> {
  return askIdentity(ctx, 'set the new password', () => ctx.identity.completeNewPassword(email, session, newPassword));
}

/** A hosted sign-in page's authorization code, for a session. */
export async function exchangeCode(ctx: SignInContext, caller: Token | null, request: { code: string; redirectUri: string | null; codeVerifier: string | null }): Promise<Session> {
  await mayLink(ctx, caller);
  const identity = await askIdentity(ctx, 'exchange the code', () => ctx.identity.exchangeCode(request));
  return linkOrProvision(ctx, caller, identity);
}
