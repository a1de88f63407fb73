import { invalidInput, notFound } from '../errors.ts';
import { identityLinkedEvent } from '../events/identity-events.ts';
import type { IdentityRef } from '../ports/identity.ts';
import type { UnitOfWork } from '../ports/storage.ts';
import type { Cents } from '../money.ts';
import { linkParent, newLinkNode, rootRequired } from '../tenancy/authority.ts';
import type { Role } from '../tenancy/roles.ts';
import { isRoot, type Token } from '../tenancy/token.ts';
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
export class LinkedMeanwhile extends Error {}

/**
 * Every successful sign-in, code exchange or device flow ends here, in a transaction of its own: without a bearer, a
 * known identity signs in to `tenantId` when it is a person there (404 otherwise) or else to the tenant it joined
 * first, and an unknown one provisions a fresh tenant; with a bearer, the identity is linked to the caller's tenant
 * (a person may belong to several). A race with another first sign-in is re-read once.
 */
export async function linkOrProvision(ctx: SignInContext, caller: Token | null, identity: IdentityRef, tenantId?: string): Promise<Session> {
  for (let attempt = 0; ; attempt++) {
    try {
      const { session, newLink } = await ctx.storage.transaction((uow) => linkIn(ctx, uow, caller, identity, tenantId));
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
 * the commit). A person linked by a root credential joins under it (docs/decisions.md, "One tree of authority"): with
 * a session's role under that session's person, as an admin under a root token; the tenant's first person is its owner,
 * and owners hang from the tenant itself.
 */
export async function linkIn(
  ctx: SignInContext,
  uow: UnitOfWork,
  caller: Token | null,
  identity: IdentityRef,
  tenantId?: string,
): Promise<{ session: Session; newLink: IdentityLink | null }> {
  const now = ctx.clock.now();
  await uow.identities.lockIdentity(identity.provider, identity.subject);
  let link: IdentityLink;
  let linked = false;
  let newLink: IdentityLink | null = null;
  if (caller) {
    if (tenantId !== undefined && tenantId !== caller.tenantId) {
      throw invalidInput(['body', 'tenant_id'], "differs from the bearer's tenant: with a bearer, the person is linked into the bearer's tenant");
    }
    const existing = await uow.identities.find(identity.provider, identity.subject, caller.tenantId);
    if (existing) link = existing;
    else {
      const parent = await linkParent(uow, caller, now);
      const first = (await uow.identities.listForTenant(caller.tenantId)).length === 0;
      const role = first ? 'owner' : parent.role;
      // owners hang from the tenant itself: only root links anyone, so none of them is above an owner's authority
      newLink = await addLink(ctx, uow, identity, caller.tenantId, caller.id, role === 'owner' ? [] : parent.chain, role, now);
      await uow.events.emit(identityLinkedEvent(newLink, now));
      link = newLink;
    }
    linked = true;
  } else {
    const existing = await uow.identities.find(identity.provider, identity.subject, tenantId);
    if (existing) link = existing;
    else if (tenantId !== undefined) throw notFound(`a person of tenant ${tenantId} with this identity`);
    else {
      const tenant = await ctx.tenancy.provisionTenant(uow, tenantNameFor(identity), now);
      link = await addLink(ctx, uow, identity, tenant.id, null, [], 'owner', now);
    }
  }
  const issued = await ctx.tenancy.issueSession(uow, link, identity, now);
  return { session: { secret: issued.secret, token: issued.token, tenantId: link.tenantId, expiresAt: issued.token.expiresAt!, linked }, newLink };
}

/**
 * Links an identity into a tenant: its node under `parentChain` (nearest first; empty for a top-level person) and the
 * link row. Another transaction linking the same identity first is LinkedMeanwhile (re-read by the caller).
 */
export async function addLink(
  ctx: Pick<SignInContext, 'ids'>,
  uow: UnitOfWork,
  identity: IdentityRef,
  tenantId: string,
  linkedByTokenId: string | null,
  parentChain: readonly Token[],
  role: Role,
  now: Date,
  limits: { spendLimitCents?: Cents | null; maxRentalHours?: number | null } = {},
): Promise<IdentityLink> {
  const node = newLinkNode(ctx.ids, tenantId, parentChain, { role, ...limits }, identity.email ?? identity.login ?? identity.subject, now);
  await uow.tokens.add(node);
  const link: IdentityLink = {
    id: ctx.ids.newId(IDENTITY_ID_PREFIX),
    provider: identity.provider,
    subject: identity.subject,
    tenantId,
    email: identity.email,
    login: identity.login ?? null,
    linkedByTokenId,
    createdAt: now,
    nodeId: node.id,
    role,
    spendLimitCents: node.spendLimitCents,
    maxRentalHours: node.maxRentalHours,
  };
  if (!(await uow.identities.add(link))) throw new LinkedMeanwhile();
  return link;
}

/**
 * With a bearer, signing in links the identity to the caller's tenant: only a root credential may (an owner's or
 * admin's session, or a token with every scope and no limit), checked before anything else happens, so a refused
 * bearer (403) spends no code, no device flow and no password try, and links nobody.
 */
export async function mayLink(_ctx: SignInContext, caller: Token | null): Promise<void> {
  if (!caller) return;
  if (!isRoot(caller)) throw rootRequired('linking a person to your tenant (a sign-in with a bearer)');
}

/** A new tenant is named after the person's address, or their provider when it gave none. */
export const tenantNameFor = (identity: IdentityRef): string => identity.email ?? `${identity.provider} user ${identity.subject}`;
