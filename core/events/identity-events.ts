import type { IdentityLink } from '../identity/links.ts';
import type { NewEvent } from './event.ts';

/** The events of a tenant's people (docs/decisions.md, "Linking people"), as their changes emit them. */

const person = (link: IdentityLink) => ({
  identity_id: link.id,
  provider: link.provider,
  email: link.email,
  login: link.login,
  linked_at: link.createdAt.toISOString(),
  linked_by_token_id: link.linkedByTokenId,
  role: link.role,
  spend_limit_cents: link.spendLimitCents,
  max_rental_hours: link.maxRentalHours,
});

/** A person was linked into the tenant (by a bearer, or an operator's invitation): they can sign in to it now. */
export const identityLinkedEvent = (link: IdentityLink, at: Date): NewEvent => ({
  tenantId: link.tenantId,
  type: 'identity.linked',
  data: { ...person(link), remove: `DELETE /v1/identities/${link.id}` },
  at,
});

/** A person was unlinked; their sessions and the tokens those issued were revoked. */
export const identityUnlinkedEvent = (link: IdentityLink, byTokenId: string, revokedTokens: number, at: Date): NewEvent => ({
  tenantId: link.tenantId,
  type: 'identity.unlinked',
  data: { ...person(link), unlinked_by_token_id: byTokenId, tokens_revoked: revokedTokens },
  at,
});

/** A person's role or limits changed; their sessions and what those issued were narrowed at once. */
export const identityUpdatedEvent = (link: IdentityLink, byTokenId: string, at: Date): NewEvent => ({
  tenantId: link.tenantId,
  type: 'identity.updated',
  data: { ...person(link), updated_by_token_id: byTokenId },
  at,
});
