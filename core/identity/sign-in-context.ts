import { DomainError, upstreamUnavailable } from '../errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { CodeHost } from '../ports/code-host.ts';
import type { Ids, Secrets } from '../ports/ids.ts';
import type { CodeSent, Identity } from '../ports/identity.ts';
import type { MailAllowance } from '../ports/mailer.ts';
import type { Storage } from '../ports/storage.ts';
import type { TenancyService } from '../tenancy/tenancy-service.ts';
import { maskAddress } from './addresses.ts';
import { isWrongCode, type FailureThrottle } from './failure-throttle.ts';
import type { PeopleService } from './people-service.ts';

/** What the sign-in use cases work with: our records, the identity provider and code host, the throttle, the mail allowance. */
export interface SignInContext {
  storage: Storage;
  clock: Clock;
  ids: Ids;
  secrets: Secrets;
  tenancy: TenancyService;
  identity: Identity;
  codeHost: CodeHost | null;
  throttle: FailureThrottle;
  /** How often one address may be mailed (docs/decisions.md, "Mail to one address"). */
  allowance: MailAllowance;
  /** Tells a tenant's people of each person linked in; it takes from the same mail allowance. */
  people: PeopleService;
}

/** An identity provider's expected outcomes pass as they are; anything else is an outage (503). */
export async function askIdentity<T>(ctx: SignInContext, what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof DomainError) throw error;
    throw upstreamUnavailable(`the identity provider (${ctx.identity.name}) could not ${what}`, error, 'try again shortly');
  }
}

/** A code tried in a slot of the email's wrong-code allowance (codes are one secret wherever they are tried). */
export function codeTry<T>(ctx: SignInContext, email: string, work: () => Promise<T>): Promise<T> {
  return ctx.throttle.guard('code', email, '', isWrongCode, work);
}

/** An ask that may mail the address: past the address's allowance the provider is not asked, the answer is the same. */
export async function mayMail(ctx: SignInContext, email: string, ask: () => Promise<CodeSent>): Promise<CodeSent> {
  if (await ctx.allowance.take(email)) return ask();
  return { destination: maskAddress(email.trim().toLowerCase()) };
}

/** The code host of the device flow, or a 409 saying it is not configured. */
export function requireCodeHost(ctx: SignInContext): CodeHost {
  if (!ctx.codeHost) throw new DomainError('CONFLICT', 'device sign-in is not configured on this server; an operator sets GITHUB_CLIENT_ID to enable GitHub');
  return ctx.codeHost;
}
