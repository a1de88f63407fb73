import { DomainError } from '../errors.ts';
import { identityLinkedEvent } from '../events/identity-events.ts';
import type { IdentityRef } from '../ports/identity.ts';
import type { UnitOfWork } from '../ports/storage.ts';
import { linksPeople, type Token } from '../tenancy/token.ts';
import { IDENTITY_ID_PREFIX, type IdentityLink } from './links.ts';
import type { SignInContext } from './sign-in-context.ts';

/** A console session handed to a person: the bearer secret (shown once) and where it leads. */
export interface Session {
  secret: string;
  token: Token;
  tenantId: string;
  expiresAt: Date;
  /** The identity was linked to the caller's tenant by this call (a bearer with manage was sent). */
  linked: boolean;
}

/** An identity found to belong elsewhere while linking: the transaction is rolled back and re-read. */
class LinkedMeanwhile extends Error {}

/**
 * Every successful sign-in, code exchange or device flow ends here, in a transaction of its own: without a bearer, a
 * known identity signs in to its tenant and an unknown one provisions a fresh tenant; with a bearer, the identity is
 * linked to the caller's tenant (an identity linked to another tenant: 409). A race with another first sign-in is
 * re-read once.
 */
export async function linkOrProvision(ctx: SignInContext, caller: Token | null, identity: IdentityRef): Promise<Session> {
  for (let attempt = 0; ; attempt++) {
    try {
      const { session, newLink } = await ctx.storage.transaction((uow) => linkIn(ctx, uow, caller, identity));
      if (newLink) await ctx.people.announceLinked(newLink);
      return session;
    } catch (error) {
      if (!(error instanceof LinkedMeanwhile) || attempt > 0) throw error;
    }
  }
}

/**
 * Signs the identity in to its tenant, links it into the caller's, or provisions a tenant for it, in the caller's
 * transaction; a person linked into a tenant that has people already is told to them (`newLink`: announce it after
 * the commit).
 */
export async function linkIn(ctx: SignInContext, uow: UnitOfWork, caller: Token | null, identity: IdentityRef): Promise<{ session: Session; newLink: IdentityLink | null }> {
  const now = ctx.clock.now();
  const existing = await uow.identities.find(identity.provider, identity.subject);
  let tenantId: string;
  let linked = false;
  let newLink: IdentityLink | null = null;
  if (caller) {
    if (existing && existing.tenantId !== caller.tenantId) {
      throw new DomainError('CONFLICT', `this ${identity.provider} identity is linked to another tenant; sign in without a bearer to use that tenant`);
    }
    if (!existing) {
      newLink = linkOf(ctx, identity, caller.tenantId, caller.id, now);
      if (!(await uow.identities.add(newLink))) throw new LinkedMeanwhile();
      await uow.events.emit(identityLinkedEvent(newLink, now));
    }
    tenantId = caller.tenantId;
    linked = true;
  } else if (existing) {
    tenantId = existing.tenantId;
  } else {
    const tenant = await ctx.tenancy.provisionTenant(uow, tenantNameFor(identity), now);
    if (!(await uow.identities.add(linkOf(ctx, identity, tenant.id, null, now)))) throw new LinkedMeanwhile();
    tenantId = tenant.id;
  }
  const issued = await ctx.tenancy.issueSession(uow, tenantId, identity, now);
  return { session: { secret: issued.secret, token: issued.token, tenantId, expiresAt: issued.token.expiresAt!, linked }, newLink };
}

/** The link of an identity to a tenant, and the token that linked it (null: the person's own sign-in or an invitation). */
export function linkOf(ctx: SignInContext, identity: IdentityRef, tenantId: string, linkedByTokenId: string | null, at: Date): IdentityLink {
  return {
    id: ctx.ids.newId(IDENTITY_ID_PREFIX),
    provider: identity.provider,
    subject: identity.subject,
    tenantId,
    email: identity.email,
    login: identity.login ?? null,
    linkedByTokenId,
    createdAt: at,
  };
}

/**
 * With a bearer, signing in links the identity to the caller's tenant: only a console session or a root credential
 * may (linksPeople), checked before anything else happens, so a refused bearer (403) spends no code, no device flow
 * and no password try, and links nobody.
 */
export async function mayLink(ctx: SignInContext, caller: Token | null): Promise<void> {
  if (!caller) return;
  const chain = await ctx.storage.read((uow) => uow.tokens.chain(caller.tenantId, caller.id));
  if (!linksPeople(chain)) {
    throw new DomainError(
      'SCOPE_REQUIRED',
      'linking a person to your tenant needs a console session or a root token (manage, and no spend cap, no max_rental_hours, no expiry on it or the tokens that issued it); ' +
        'sign in without a bearer to reach the identity\'s own tenant',
    );
  }
}

/** A new tenant is named after the person's address, or their provider when it gave none. */
export const tenantNameFor = (identity: IdentityRef): string => identity.email ?? `${identity.provider} user ${identity.subject}`;
