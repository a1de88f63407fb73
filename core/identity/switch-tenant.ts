import { DomainError, notFound } from '../errors.ts';
import type { Role } from '../tenancy/roles.ts';
import type { Token } from '../tenancy/token.ts';
import type { Session } from './link-or-provision.ts';
import type { SignInContext } from './sign-in-context.ts';

/** A tenant the person of a session belongs to, with their role there. */
export interface PersonTenant {
  tenantId: string;
  name: string;
  role: Role;
  current: boolean;
}

/** Who a console session was issued to; only a session has a person behind it. */
async function holder(ctx: SignInContext, session: Token): Promise<{ provider: string; subject: string }> {
  if (session.kind !== 'session') throw new DomainError('SCOPE_REQUIRED', 'this needs a console session (a person signed in), not an API token');
  const found = await ctx.storage.read((uow) => uow.identities.holderOf(session.id));
  if (!found) throw new DomainError('SCOPE_REQUIRED', 'this session has no person on record (it predates them): sign in again');
  return found;
}

/** The tenants the session's person belongs to (docs/decisions.md, "One tree of authority"), the first joined first. */
export async function tenantsOf(ctx: SignInContext, session: Token): Promise<PersonTenant[]> {
  const person = await holder(ctx, session);
  const links = await ctx.storage.read((uow) => uow.identities.tenantsOf(person.provider, person.subject));
  return links.map((link) => ({ tenantId: link.tenantId, name: link.tenantName, role: link.role, current: link.tenantId === session.tenantId }));
}

/**
 * A session of the same person in another of their tenants, without their password again: the console's switch. The
 * session asking stays as it is (sign out ends it). Another tenant of which they are not a person: 404.
 */
export async function switchTenant(ctx: SignInContext, session: Token, tenantId: string): Promise<Session> {
  const person = await holder(ctx, session);
  return ctx.storage.transaction(async (uow) => {
    const link = await uow.identities.find(person.provider, person.subject, tenantId);
    if (!link) throw notFound(`a tenant ${tenantId} of yours`);
    const now = ctx.clock.now();
    const issued = await ctx.tenancy.issueSession(uow, link, person, now);
    return { secret: issued.secret, token: issued.token, tenantId, expiresAt: issued.token.expiresAt!, linked: false };
  });
}
