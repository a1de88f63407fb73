import type { DeviceStart } from '../ports/code-host.ts';
import type { CodeSent, IdentityRef, SignInOutcome } from '../ports/identity.ts';
import type { Token } from '../tenancy/token.ts';
import { pollDevice, type DevicePollResult } from './device-poll.ts';
import { startDevice } from './device-start.ts';
import { confirmEmail, forgotPassword, resendCode, resetPassword, signUp } from './email-codes.ts';
import { FailureThrottle, type ThrottleSettings } from './failure-throttle.ts';
import { invite, type Invited } from './invite.ts';
import type { Session } from './link-or-provision.ts';
import { checkPassword, completeNewPassword, exchangeCode, setNewPassword, signIn, type SignInResult } from './sign-in.ts';
import type { SignInContext } from './sign-in-context.ts';
import { switchTenant, tenantsOf, type PersonTenant } from './switch-tenant.ts';

export interface SignInSettings {
  /** Failed sign-ins and wrong codes allowed before 429 (docs/decisions.md, "Sign-in throttles"). */
  throttle: ThrottleSettings;
}

/**
 * Sign-in (docs/decisions.md, "Sign-in"): every successful sign-in, code exchange or device flow ends in
 * link-or-provision and a console session (link-or-provision.ts). The identity provider proves who the person is;
 * sign-in decides which tenant that is, and throttles failures per email across replicas. Each use case is a file of
 * core/identity; this object holds the throttle and hands them what they work with.
 */
export class SignInService {
  private readonly context: SignInContext;

  /** What the use cases work with (sign-in-context.ts); the throttle is made here from `settings`. */
  constructor(deps: Omit<SignInContext, 'throttle'> & { settings: SignInSettings }) {
    const { settings, ...context } = deps;
    this.context = { ...context, throttle: new FailureThrottle({ storage: deps.storage, clock: deps.clock, settings: settings.throttle }) };
  }

  /** AuthConfigOut: the identity provider's public settings (never a secret), and the device flow when a code host is configured. */
  config(): { idp: Record<string, unknown>; device_flow: { provider: string } | null } {
    return { idp: this.context.identity.publicConfig(), device_flow: this.context.codeHost ? { provider: this.context.codeHost.name } : null };
  }

  get identityProvider(): string {
    return this.context.identity.name;
  }

  signUp(email: string, password: string): Promise<CodeSent> {
    return signUp(this.context, email, password);
  }

  resendCode(email: string): Promise<CodeSent> {
    return resendCode(this.context, email);
  }

  forgotPassword(email: string): Promise<CodeSent> {
    return forgotPassword(this.context, email);
  }

  confirmEmail(email: string, code: string): Promise<void> {
    return confirmEmail(this.context, email, code);
  }

  resetPassword(email: string, code: string, newPassword: string): Promise<void> {
    return resetPassword(this.context, email, code, newPassword);
  }

  signIn(caller: Token | null, email: string, password: string, client: string, tenantId?: string): Promise<SignInResult> {
    return signIn(this.context, caller, email, password, client, tenantId);
  }

  tenantsOf(session: Token): Promise<PersonTenant[]> {
    return tenantsOf(this.context, session);
  }

  switchTenant(session: Token, tenantId: string): Promise<Session> {
    return switchTenant(this.context, session, tenantId);
  }

  checkPassword(email: string, password: string, client: string): Promise<SignInOutcome> {
    return checkPassword(this.context, email, password, client);
  }

  completeNewPassword(caller: Token | null, email: string, session: string, newPassword: string): Promise<Session> {
    return completeNewPassword(this.context, caller, email, session, newPassword);
  }

  setNewPassword(email: string, session: string, newPassword: string): Promise<IdentityRef> {
    return setNewPassword(this.context, email, session, newPassword);
  }

  exchange(caller: Token | null, request: { code: string; redirectUri: string | null; codeVerifier: string | null }): Promise<Session> {
    return exchangeCode(this.context, caller, request);
  }

  invite(email: string, tenantId: string | null): Promise<Invited> {
    return invite(this.context, email, tenantId);
  }

  startDevice(): Promise<DeviceStart> {
    return startDevice(this.context);
  }

  pollDevice(caller: Token | null, deviceCode: string): Promise<DevicePollResult> {
    return pollDevice(this.context, caller, deviceCode);
  }
}
