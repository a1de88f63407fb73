import { DomainError, notFound } from '../errors.ts';
import { identityLinkedEvent } from '../events/identity-events.ts';
import { addLink, tenantNameFor } from './link-or-provision.ts';
import type { IdentityLink } from './links.ts';
import { askIdentity, type SignInContext } from './sign-in-context.ts';

export interface Invited {
  email: string;
  tenantId: string;
  status: 'invited';
}

/** An operator's invitation: the user exists now (temporary password mailed) and belongs to the tenant (a new one when none is named). */
export async function invite(ctx: SignInContext, email: string, tenantId: string | null): Promise<Invited> {
  if (tenantId !== null) {
    const tenant = await ctx.storage.read((uow) => uow.tenants.get(tenantId));
    if (!tenant) throw notFound(`tenant ${tenantId}`);
    // asked before the provider renews anything (and mails a password); checked again below by identity
    const earlier = await ctx.storage.read((uow) => uow.identities.findByEmail(ctx.identity.name, email));
    if (earlier && earlier.tenantId !== tenantId) throw invitedElsewhere(email, earlier.tenantId, false);
  }
  // an invitation mails the address too: past its allowance the account is still made, and not mailed
  const mail = await ctx.allowance.take(email);
  const identity = await askIdentity(ctx, 'invite', () => ctx.identity.invite(email, { mail }));
  const linked = await ctx.storage.transaction(async (uow): Promise<{ tenantId: string; newLink: IdentityLink | null }> => {
    const now = ctx.clock.now();
    // a renewed invitation (the provider mailed a fresh temporary password) stays with its tenant
    const existing = await uow.identities.find(identity.provider, identity.subject);
    if (existing) {
      if (tenantId !== null && tenantId !== existing.tenantId) throw invitedElsewhere(identity.email ?? email, existing.tenantId, true);
      return { tenantId: existing.tenantId, newLink: null };
    }
    if (tenantId === null) {
      const tenant = await ctx.tenancy.provisionTenant(uow, tenantNameFor(identity), now);
      await addLink(ctx, uow, identity, tenant.id, null, [], 'owner', now);
      return { tenantId: tenant.id, newLink: null };
    }
    // invited into a tenant that may have people already: they hear of it, as of any link; the operator stands above
    // the tenant, so the person hangs from the tenant itself, its owner when first, else an admin
    const first = (await uow.identities.listForTenant(tenantId)).length === 0;
    const link = await addLink(ctx, uow, identity, tenantId, null, [], first ? 'owner' : 'admin', now);
    await uow.events.emit(identityLinkedEvent(link, now));
    return { tenantId, newLink: link };
  });
  if (linked.newLink) await ctx.people.announceLinked(linked.newLink);
  return { email: identity.email ?? email, tenantId: linked.tenantId, status: 'invited' };
}

/** An invitation (or account) of this address belongs to another tenant: it cannot move. */
const invitedElsewhere = (email: string, tenantId: string, renewed: boolean): DomainError =>
  new DomainError(
    'CONFLICT',
    `${email} belongs to tenant ${tenantId}; an identity cannot move to another tenant` +
      (renewed ? ' (its invitation there was renewed: a fresh temporary password was mailed)' : '; invite it without tenant_id, or with that tenant, to renew a pending invitation'),
  );
