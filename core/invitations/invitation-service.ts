import { DomainError, notFound } from '../errors.ts';
import { BackgroundMail, type MailErrorReporter } from '../identity/background-mail.ts';
import type { PeopleService } from '../identity/people-service.ts';
import type { Clock } from '../ports/clock.ts';
import type { Ids, Secrets } from '../ports/ids.ts';
import type { MailAllowance, Mailer } from '../ports/mailer.ts';
import type { Storage } from '../ports/storage.ts';
import { requireRoot, type LinkTerms } from '../tenancy/authority.ts';
import type { Role } from '../tenancy/roles.ts';
import type { Token } from '../tenancy/token.ts';
import { acceptInvitation } from './accept-invitation.ts';
import type { Invitation } from './invitation.ts';
import type { InvitationContext } from './invitation-context.ts';
import { invitePerson } from './invite-person.ts';

const LIST_LIMIT = 200;

/**
 * Invitations from a tenant (docs/decisions.md, "Invitations"): root invites an address with a role, lists and revokes;
 * the invitee accepts with their own session. Each use case is a file of core/invitations; this object holds the
 * background mail and hands them what they work with.
 */
export class InvitationService {
  private readonly context: InvitationContext;

  constructor(deps: { storage: Storage; clock: Clock; ids: Ids; secrets: Secrets; allowance: MailAllowance; mailer: Mailer | null; people: PeopleService; onMailError?: MailErrorReporter }) {
    const { mailer, onMailError, ...rest } = deps;
    this.context = { ...rest, mail: mailer ? new BackgroundMail(mailer, onMailError) : null };
  }

  invite(caller: Token, email: string, terms: LinkTerms): Promise<Invitation> {
    return invitePerson(this.context, caller, email, terms);
  }

  list(caller: Token): Promise<Invitation[]> {
    requireRoot(caller, "reading the tenant's invitations");
    return this.context.storage.read((uow) => uow.invitations.list(caller.tenantId, LIST_LIMIT));
  }

  /** A pending invitation's code stops working (an expired or revoked one stays as it is); an accepted one: 409. */
  async revoke(caller: Token, invitationId: string): Promise<void> {
    requireRoot(caller, 'revoking an invitation');
    await this.context.storage.transaction(async (uow) => {
      const invitation = await uow.invitations.lock(caller.tenantId, invitationId);
      if (!invitation) throw notFound(`invitation ${invitationId}`);
      if (invitation.status === 'accepted') throw new DomainError('CONFLICT', `invitation ${invitationId} was accepted; remove the person instead (DELETE /v1/identities/{identity_id})`);
      if (invitation.status === 'pending') await uow.invitations.update({ ...invitation, status: 'revoked', endedAt: this.context.clock.now() });
    });
  }

  accept(caller: Token, code: string): Promise<{ tenantId: string; role: Role }> {
    return acceptInvitation(this.context, caller, code);
  }

  /** Resolves once every invitation mail handed over so far has left or failed (tests, a graceful stop). */
  async idle(): Promise<void> {
    await this.context.mail?.idle();
  }

  get clock(): Clock {
    return this.context.clock;
  }
}
