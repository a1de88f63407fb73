import { DomainError, notFound } from '../errors.ts';
import { identityUnlinkedEvent, identityUpdatedEvent } from '../events/identity-events.ts';
import type { Clock } from '../ports/clock.ts';
import type { Mail, MailAllowance, Mailer } from '../ports/mailer.ts';
import { BackgroundMail, type MailErrorReporter } from './background-mail.ts';
import type { Storage, UnitOfWork } from '../ports/storage.ts';
import type { TenancyService } from '../tenancy/tenancy-service.ts';
import { endSubtree } from '../bookings/end-subtree.ts';
import type { Cents } from '../money.ts';
import { lockLiveChain, requireOwner, requireRoot } from '../tenancy/authority.ts';
import { narrowSubtree } from '../tenancy/narrow-subtree.ts';
import { roleTakesLimits, type Role } from '../tenancy/roles.ts';
import type { Token } from '../tenancy/token.ts';
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

  /** The caller's tenant's people (those whose link has not ended), oldest link first. */
  list(caller: Token): Promise<IdentityLink[]> {
    return this.storage.read((uow) => uow.identities.listForTenant(caller.tenantId));
  }

  /**
   * Unlinks a person of the caller's tenant (root only): their link ends with its subtree (end-subtree.ts), so their
   * sessions and every token those issued stop working. An owner is removed only by an owner; the last owner is never
   * (409), so a tenant always keeps someone who can do everything. The tenant's people are locked while it is decided,
   * so two removals at once cannot both take the last two owners. Another tenant's identity (or none) is 404.
   */
  async remove(caller: Token, identityId: string): Promise<void> {
    requireRoot(caller, 'removing a person');
    const revoked = await this.storage.transaction(async (uow) => {
      const now = this.clock.now();
      const people = await uow.identities.listForTenant(caller.tenantId, { lock: true });
      const self = await callerNow(uow, caller, now, 'removing a person');
      const target = people.find((person) => person.id === identityId);
      if (!target) throw notFound(`identity ${identityId}`);
      if (target.role === 'owner') {
        requireOwner(self, `removing ${nameOf(target)}, an owner`);
        if (people.filter((person) => person.role === 'owner').length === 1) throw lastOwner(target, 'removed');
      }
      const ids = await endSubtree(uow, caller.tenantId, target.nodeId, now);
      await uow.identities.remove(caller.tenantId, target.id);
      ids.push(...(await this.tenancy.endSessionsIn(uow, target, now, caller.tenantId)));
      await uow.events.emit(identityUnlinkedEvent(target, caller.id, ids.length, now));
      return ids;
    });
    await this.tenancy.announceRevoked(revoked);
  }

  /**
   * Changes a person's role or a member's limits (root only; owners made or changed by an owner only; the last owner
   * is never demoted, 409), at once for their sessions and everything under them (narrow-subtree.ts): no new sign-in is
   * needed, and what no longer fits is narrowed or ended.
   */
  async update(caller: Token, identityId: string, change: PersonChange): Promise<IdentityLink> {
    requireRoot(caller, "changing a person's role or limits");
    const changed = await this.storage.transaction(async (uow) => {
      const now = this.clock.now();
      const people = await uow.identities.listForTenant(caller.tenantId, { lock: true });
      const self = await callerNow(uow, caller, now, "changing a person's role or limits");
      const target = people.find((person) => person.id === identityId);
      if (!target) throw notFound(`identity ${identityId}`);
      const role = change.role ?? target.role;
      if (target.role === 'owner' || role === 'owner') requireOwner(self, role === 'owner' ? 'making an owner' : `changing ${nameOf(target)}, an owner`);
      if (target.role === 'owner' && role !== 'owner' && people.filter((person) => person.role === 'owner').length === 1) throw lastOwner(target, 'demoted');
      const keepsLimits = roleTakesLimits(role);
      const terms = {
        role,
        spendLimitCents: change.spendLimitCents !== undefined ? change.spendLimitCents : keepsLimits ? target.spendLimitCents : null,
        maxRentalHours: change.maxRentalHours !== undefined ? change.maxRentalHours : keepsLimits ? target.maxRentalHours : null,
      };
      const ids = await narrowSubtree(uow, caller.tenantId, target.nodeId, terms, now);
      const updated = (await uow.identities.listForTenant(caller.tenantId)).find((person) => person.id === identityId);
      if (!updated) throw new Error(`identity ${identityId} vanished while it was changed`);
      await uow.events.emit(identityUpdatedEvent(updated, caller.id, now));
      return { updated, ids };
    });
    await this.tenancy.announceRevoked(changed.ids);
    return changed.updated;
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

/**
 * The caller as it is now, read under the tree's lock (lockLiveChain) after the people were locked: a caller removed or
 * demoted by a change that committed while this one waited for the people's lock acts with what it has left, not with
 * what it was authenticated as.
 */
async function callerNow(uow: UnitOfWork, caller: Token, now: Date, what: string): Promise<Token> {
  const self = (await lockLiveChain(uow, caller.tenantId, caller.id, now))[0];
  if (!self) throw new DomainError('UNAUTHENTICATED', 'the token or one that issued it was revoked or expired');
  requireRoot(self, what);
  return self;
}

/** What PATCH /v1/identities/{identity_id} asks: each left out stays; null clears a member's limit. */
export interface PersonChange {
  role?: Role;
  spendLimitCents?: Cents | null;
  maxRentalHours?: number | null;
}

const lastOwner = (target: IdentityLink, how: string): DomainError =>
  new DomainError('CONFLICT', `${nameOf(target)} is the tenant's last owner and cannot be ${how}; make another person an owner first`);

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
    `They can now sign in to it as ${link.role === 'admin' || link.role === 'owner' ? 'an' : 'a'} ${link.role}.`,
    '',
    'If you do not know them, remove them: the People page of the console, or',
    `DELETE /v1/identities/${link.id} with a token that has the manage scope.`,
    'Removing them ends their sessions in the tenant and every token those sessions issued.',
  ].join('\n'),
});
