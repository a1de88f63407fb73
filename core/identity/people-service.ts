import { DomainError, notFound } from '../errors.ts';
import { identityUnlinkedEvent } from '../events/identity-events.ts';
import type { Clock } from '../ports/clock.ts';
import type { Mail, MailAllowance, Mailer } from '../ports/mailer.ts';
import { BackgroundMail, type MailErrorReporter } from './background-mail.ts';
import type { Storage, UnitOfWork } from '../ports/storage.ts';
import type { TenancyService } from '../tenancy/tenancy-service.ts';
import { isActive, linksPeople, type Token } from '../tenancy/token.ts';
import type { IdentityLink } from './links.ts';

/** Called with a notice that could not be mailed (it left in the background, after the request was answered). */
export type NoticeErrorReporter = MailErrorReporter;

/** How a person is named to others: the address, else the provider's handle, else the provider's id. */
export const nameOf = (link: Pick<IdentityLink, 'provider' | 'subject' | 'email' | 'login'>): string =>
  link.email ?? (link.login ? `${link.login} (${link.provider})` : `${link.provider} user ${link.subject}`);

/**
 * A tenant's people (docs/decisions.md, "Linking people"): the identities linked to it, listed and removable,
 * and told of each other. Removing a person ends their console sessions in the tenant with every token those
 * issued; the last person of a tenant that has no root token left cannot be removed, so nobody locks the
 * tenant out of itself.
 */
export class PeopleService {
  private readonly storage: Storage;
  private readonly clock: Clock;
  private readonly tenancy: TenancyService;
  private readonly allowance: MailAllowance;
  /** null: no mailer, no notices. */
  private readonly mail: BackgroundMail | null;

  constructor(deps: { storage: Storage; clock: Clock; tenancy: TenancyService; mailer: Mailer | null; allowance: MailAllowance; onMailError?: NoticeErrorReporter }) {
    this.storage = deps.storage;
    this.clock = deps.clock;
    this.tenancy = deps.tenancy;
    this.allowance = deps.allowance;
    this.mail = deps.mailer ? new BackgroundMail(deps.mailer, deps.onMailError) : null;
  }

  /** The caller's tenant's people, oldest link first. */
  list(caller: Token): Promise<IdentityLink[]> {
    return this.storage.read((uow) => uow.identities.listForTenant(caller.tenantId));
  }

  /**
   * Unlinks a person of the caller's tenant and ends their sessions there, with the tokens those issued.
   * Another tenant's identity (or none) is 404. The tenant's people are locked while it is decided, so two
   * removals at once cannot both take the last two.
   */
  async remove(caller: Token, identityId: string): Promise<void> {
    const revoked = await this.storage.transaction(async (uow) => {
      const now = this.clock.now();
      const people = await uow.identities.listForTenant(caller.tenantId, { lock: true });
      const target = people.find((person) => person.id === identityId);
      if (!target) throw notFound(`identity ${identityId}`);
      if (people.length === 1 && !(await hasRootToken(uow, caller.tenantId, now))) {
        throw new DomainError(
          'CONFLICT',
          `${nameOf(target)} is the last person of this tenant and it has no root token (manage, no cap, no max_rental_hours, no expiry): ` +
            'removing them would leave nobody able to sign in to it; link another person first (sign them in with your session as the bearer)',
        );
      }
      await uow.identities.remove(caller.tenantId, target.id);
      const ids = await this.tenancy.endSessionsIn(uow, target, now, caller.tenantId);
      await uow.events.emit(identityUnlinkedEvent(target, caller.id, ids.length, now));
      return ids;
    });
    await this.tenancy.announceRevoked(revoked);
  }

  /**
   * After a person was linked into a tenant (and committed): every other person of it with an address is
   * mailed, within each address's allowance, in the background (the answer does not wait for SMTP).
   */
  async announceLinked(link: IdentityLink): Promise<void> {
    const mail = this.mail;
    if (!mail) return;
    const { people, tenant, by } = await this.storage.read(async (uow) => ({
      people: await uow.identities.listForTenant(link.tenantId),
      tenant: await uow.tenants.get(link.tenantId),
      by: link.linkedByTokenId ? await uow.tokens.findById(link.linkedByTokenId) : null,
    }));
    const tenantName = tenant ? `"${tenant.name}" (${tenant.id})` : link.tenantId;
    for (const other of people) {
      if (other.id === link.id || !other.email) continue;
      if (!(await this.allowance.take(other.email))) continue;
      mail.send(linkedNotice(other.email, link, tenantName, by));
    }
  }

  /** Resolves once every notice handed to the mailer so far has left or failed (tests, a graceful stop). */
  async idle(): Promise<void> {
    await this.mail?.idle();
  }
}

/** Whether the tenant keeps a live root token (linksPeople, an API token): a way back in without any person. */
async function hasRootToken(uow: UnitOfWork, tenantId: string, now: Date): Promise<boolean> {
  const tokens = await uow.tokens.list(tenantId);
  const byId = new Map(tokens.map((token) => [token.id, token]));
  return tokens.some((token) => {
    if (token.kind !== 'api' || !isActive(token, now)) return false;
    const ancestors = token.ancestorIds.map((id) => byId.get(id));
    return ancestors.every((a) => a !== undefined && isActive(a, now)) && linksPeople([token, ...(ancestors as Token[])]);
  });
}

const byWhom = (by: Token | null): string => {
  if (!by) return 'an operator\'s invitation';
  if (by.kind === 'session') return `a console session (token ${by.id})`;
  return `the token ${by.id}${by.name ? ` ("${by.name}")` : ''}`;
};

/** Told to the other people of a tenant when someone is linked into it. */
export const linkedNotice = (to: string, link: IdentityLink, tenantName: string, by: Token | null): Mail => ({
  to,
  subject: 'Someone was added to your gpu-control-plane tenant',
  text: [
    `${nameOf(link)} (${link.provider}) was linked to the tenant ${tenantName} at ${link.createdAt.toISOString()} by ${byWhom(by)}.`,
    'They can now sign in to it, with every scope and no spend cap.',
    '',
    'If you do not know them, remove them: the People page of the console, or',
    `DELETE /v1/identities/${link.id} with a token that has the manage scope.`,
    'Removing them ends their sessions in the tenant and every token those sessions issued.',
  ].join('\n'),
});
