import { DomainError, notFound, upstreamUnavailable } from '../errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { CodeHost, DeviceStart } from '../ports/code-host.ts';
import type { Ids, Secrets } from '../ports/ids.ts';
import type { CodeSent, Identity, IdentityRef, SignInOutcome } from '../ports/identity.ts';
import type { MailAllowance } from '../ports/mailer.ts';
import { maskAddress } from './addresses.ts';
import { FailureThrottle, isWrongCode, isWrongPassword, type ThrottleSettings } from './failure-throttle.ts';
import type { Storage, UnitOfWork } from '../ports/storage.ts';
import type { TenancyService } from '../tenancy/tenancy-service.ts';
import { IDENTITY_ID_PREFIX, type DeviceFlow, type IdentityLink } from './links.ts';
import { identityLinkedEvent } from '../events/identity-events.ts';
import type { PeopleService } from './people-service.ts';
import { linksPeople, type Token } from '../tenancy/token.ts';

export interface SignInSettings {
  /** Failed sign-ins and wrong codes allowed before 429 (docs/decisions.md, "Sign-in throttles"). */
  throttle: ThrottleSettings;
}

/** A console session handed to a person: the bearer secret (shown once) and where it leads. */
export interface Session {
  secret: string;
  token: Token;
  tenantId: string;
  expiresAt: Date;
  /** The identity was linked to the caller's tenant by this call (a bearer with manage was sent). */
  linked: boolean;
}

export type SignInResult = { status: 'signed_in'; session: Session } | { status: 'new_password_required'; session: string };

export type DevicePollResult =
  | { status: 'pending' | 'slow_down' | 'expired' | 'denied'; interval: number }
  | { status: 'complete'; interval: number; session: Session };

export interface Invited {
  email: string;
  tenantId: string;
  status: 'invited';
}

/** An identity found to belong elsewhere while linking: the transaction is rolled back and re-read. */
class LinkedMeanwhile extends Error {}

/**
 * Sign-in (DESIGN.md §11): every successful sign-in, code exchange or device flow ends in
 * link-or-provision and a console session. Without a bearer, a known identity signs in to its tenant and
 * an unknown one provisions a fresh tenant; with a bearer holding `manage`, the identity is linked to the
 * caller's tenant (an identity linked to another tenant: 409). The identity provider proves who the person
 * is; this service decides which tenant that is, and throttles failures per email across replicas.
 */
export class SignInService {
  private readonly storage: Storage;
  private readonly clock: Clock;
  private readonly ids: Ids;
  private readonly secrets: Secrets;
  private readonly tenancy: TenancyService;
  private readonly identity: Identity;
  private readonly codeHost: CodeHost | null;
  private readonly throttle: FailureThrottle;
  private readonly allowance: MailAllowance;
  private readonly people: PeopleService;

  /** `people`: tells a tenant's people of each person linked in; it takes from the same mail `allowance`. */
  constructor(deps: {
    storage: Storage;
    clock: Clock;
    ids: Ids;
    secrets: Secrets;
    tenancy: TenancyService;
    identity: Identity;
    codeHost: CodeHost | null;
    people: PeopleService;
    allowance: MailAllowance;
    settings: SignInSettings;
  }) {
    this.storage = deps.storage;
    this.clock = deps.clock;
    this.ids = deps.ids;
    this.secrets = deps.secrets;
    this.tenancy = deps.tenancy;
    this.identity = deps.identity;
    this.codeHost = deps.codeHost;
    this.throttle = new FailureThrottle({ storage: deps.storage, clock: deps.clock, settings: deps.settings.throttle });
    this.allowance = deps.allowance;
    this.people = deps.people;
  }

  /** AuthConfigOut: the identity provider's public settings (never a secret), and the device flow when a code host is configured. */
  config(): { idp: Record<string, unknown>; device_flow: { provider: string } | null } {
    return { idp: this.identity.publicConfig(), device_flow: this.codeHost ? { provider: this.codeHost.name } : null };
  }

  get identityProvider(): string {
    return this.identity.name;
  }

  signUp(email: string, password: string): Promise<CodeSent> {
    return this.mayMail(email, () => this.idp('sign up', () => this.identity.signUp(email, password)));
  }

  resendCode(email: string): Promise<CodeSent> {
    return this.mayMail(email, () => this.idp('send a code', () => this.identity.resendCode(email)));
  }

  forgotPassword(email: string): Promise<CodeSent> {
    return this.mayMail(email, () => this.idp('send a code', () => this.identity.forgotPassword(email)));
  }

  confirmEmail(email: string, code: string): Promise<void> {
    return this.codeTry(email, () => this.idp('confirm the email', () => this.identity.confirmEmail(email, code)));
  }

  /**
   * A new password with the mailed code; then every console session issued to that person ends (in every
   * tenant, with the tokens those sessions issued): whoever stole a session loses it with the old password.
   */
  async resetPassword(email: string, code: string, newPassword: string): Promise<void> {
    const identity = await this.codeTry(email, () => this.idp('reset the password', () => this.identity.resetPassword(email, code, newPassword)));
    await this.tenancy.endSessionsOf(identity);
  }

  /** Email and password: a session, or the new-password step of an invited user. `client`: the caller's address. */
  async signIn(caller: Token | null, email: string, password: string, client: string): Promise<SignInResult> {
    await this.mayLink(caller);
    const outcome = await this.checkPassword(email, password, client);
    if (outcome.kind === 'new_password_required') return { status: 'new_password_required', session: outcome.session };
    return { status: 'signed_in', session: await this.linkOrProvision(caller, outcome.identity) };
  }

  /**
   * The password check alone, throttled per email and client address under a per-email ceiling (FailureThrottle):
   * the hosted sign-in page uses it before it hands out an authorization code. Past a limit the answer is 429
   * until the window frees a slot, even with the right password.
   */
  checkPassword(email: string, password: string, client: string): Promise<SignInOutcome> {
    return this.throttle.guard('password', email, client, isWrongPassword, () => this.idp('sign in', () => this.identity.signIn(email, password)));
  }

  async completeNewPassword(caller: Token | null, email: string, session: string, newPassword: string): Promise<Session> {
    await this.mayLink(caller);
    return this.linkOrProvision(caller, await this.setNewPassword(email, session, newPassword));
  }

  /** The new-password step alone: the hosted sign-in page uses it before it hands out an authorization code. */
  setNewPassword(email: string, session: string, newPassword: string): Promise<IdentityRef> {
    return this.idp('set the new password', () => this.identity.completeNewPassword(email, session, newPassword));
  }

  /** A hosted sign-in page's authorization code, for a session. */
  async exchange(caller: Token | null, request: { code: string; redirectUri: string | null; codeVerifier: string | null }): Promise<Session> {
    await this.mayLink(caller);
    const identity = await this.idp('exchange the code', () => this.identity.exchangeCode(request));
    return this.linkOrProvision(caller, identity);
  }

  /** An operator's invitation: the user exists now (temporary password mailed) and belongs to the tenant. */
  async invite(email: string, tenantId: string | null): Promise<Invited> {
    if (tenantId !== null) {
      const tenant = await this.storage.read((uow) => uow.tenants.get(tenantId));
      if (!tenant) throw notFound(`tenant ${tenantId}`);
      // asked before the provider renews anything (and mails a password); checked again below by identity
      const earlier = await this.storage.read((uow) => uow.identities.findByEmail(this.identity.name, email));
      if (earlier && earlier.tenantId !== tenantId) throw invitedElsewhere(email, earlier.tenantId, false);
    }
    // an invitation mails the address too: past its allowance the account is still made, and not mailed
    const mail = await this.allowance.take(email);
    const identity = await this.idp('invite', () => this.identity.invite(email, { mail }));
    const linked = await this.storage.transaction(async (uow): Promise<{ tenantId: string; newLink: IdentityLink | null }> => {
      const now = this.clock.now();
      // a renewed invitation (the provider mailed a fresh temporary password) stays with its tenant
      const existing = await uow.identities.find(identity.provider, identity.subject);
      if (existing) {
        if (tenantId !== null && tenantId !== existing.tenantId) throw invitedElsewhere(identity.email ?? email, existing.tenantId, true);
        return { tenantId: existing.tenantId, newLink: null };
      }
      if (tenantId === null) {
        const tenant = await this.tenancy.provisionTenant(uow, tenantNameFor(identity), now);
        await uow.identities.add(this.linkOf(identity, tenant.id, null, now));
        return { tenantId: tenant.id, newLink: null };
      }
      // invited into a tenant that may have people already: they hear of it, as of any link
      const link = this.linkOf(identity, tenantId, null, now);
      await uow.identities.add(link);
      await uow.events.emit(identityLinkedEvent(link, now));
      return { tenantId, newLink: link };
    });
    if (linked.newLink) await this.people.announceLinked(linked.newLink);
    return { email: identity.email ?? email, tenantId: linked.tenantId, status: 'invited' };
  }

  // ---- the device flow ------------------------------------------------------------------------------

  async startDevice(): Promise<DeviceStart> {
    const host = this.requireCodeHost();
    let start: DeviceStart;
    try {
      start = await host.startDevice();
    } catch (error) {
      throw upstreamUnavailable(`${host.name} did not start a device flow`, error, 'try again shortly');
    }
    const now = this.clock.now();
    await this.storage.transaction((uow) =>
      uow.deviceFlows.add({
        id: this.ids.newId('dfl'),
        provider: host.name,
        deviceCodeDigest: this.secrets.digest(start.deviceCode),
        status: 'pending',
        intervalSeconds: Math.max(1, start.interval),
        expiresAt: new Date(now.getTime() + start.expiresIn * 1000),
        lastPolledAt: null,
        tenantId: null,
        createdAt: now,
      }),
    );
    return start;
  }

  /**
   * One poll of a device flow. A poll sooner than the interval answers slow_down (and the interval grows
   * by 5 s, as RFC 8628 says) without asking the code host; a flow that completed, expired or was denied
   * answers `expired` (or `denied`) for ever after, so one device code signs in once: twenty parallel polls
   * of a completed code make one tenant.
   */
  async pollDevice(caller: Token | null, deviceCode: string): Promise<DevicePollResult> {
    const host = this.requireCodeHost();
    await this.mayLink(caller);
    const digest = this.secrets.digest(deviceCode);
    const gate = await this.storage.transaction(async (uow): Promise<{ answer: DevicePollResult } | { flow: DeviceFlow }> => {
      const flow = await uow.deviceFlows.lockByDigest(digest);
      const now = this.clock.now();
      if (!flow || flow.provider !== host.name) return { answer: { status: 'expired' as const, interval: 5 } };
      if (flow.status !== 'pending') return { answer: { status: flow.status === 'denied' ? ('denied' as const) : ('expired' as const), interval: flow.intervalSeconds } };
      if (now.getTime() >= flow.expiresAt.getTime()) {
        await uow.deviceFlows.update({ ...flow, status: 'expired' });
        return { answer: { status: 'expired' as const, interval: flow.intervalSeconds } };
      }
      if (flow.lastPolledAt && now.getTime() - flow.lastPolledAt.getTime() < flow.intervalSeconds * 1000) {
        const slower = { ...flow, intervalSeconds: flow.intervalSeconds + 5, lastPolledAt: now };
        await uow.deviceFlows.update(slower);
        return { answer: { status: 'slow_down' as const, interval: slower.intervalSeconds } };
      }
      await uow.deviceFlows.update({ ...flow, lastPolledAt: now });
      return { flow };
    });
    if ('answer' in gate) return gate.answer;
    const polled = await host.pollDevice(deviceCode).catch((error: unknown) => {
      throw upstreamUnavailable(`${host.name} did not answer the poll`, error, 'poll again after the interval');
    });
    if (polled.status === 'pending') return { status: 'pending', interval: gate.flow.intervalSeconds };
    const done = await this.storage.transaction(async (uow): Promise<{ answer: DevicePollResult; newLink: IdentityLink | null }> => {
      const flow = await uow.deviceFlows.lockByDigest(digest);
      if (!flow || flow.status !== 'pending') return { answer: { status: 'expired', interval: gate.flow.intervalSeconds }, newLink: null };
      if (polled.status === 'slow_down') {
        const interval = Math.max(polled.interval, flow.intervalSeconds);
        await uow.deviceFlows.update({ ...flow, intervalSeconds: interval });
        return { answer: { status: 'slow_down', interval }, newLink: null };
      }
      if (polled.status !== 'complete') {
        await uow.deviceFlows.update({ ...flow, status: polled.status });
        return { answer: { status: polled.status, interval: flow.intervalSeconds }, newLink: null };
      }
      const { session, newLink } = await this.linkIn(uow, caller, polled.identity);
      await uow.deviceFlows.update({ ...flow, status: 'complete', tenantId: session.tenantId });
      return { answer: { status: 'complete' as const, interval: flow.intervalSeconds, session }, newLink };
    });
    if (done.newLink) await this.people.announceLinked(done.newLink);
    return done.answer;
  }

  // ---- link-or-provision ----------------------------------------------------------------------------

  /** Links or provisions in a transaction of its own; a race with another first sign-in is re-read once. */
  private async linkOrProvision(caller: Token | null, identity: IdentityRef): Promise<Session> {
    for (let attempt = 0; ; attempt++) {
      try {
        const { session, newLink } = await this.storage.transaction((uow) => this.linkIn(uow, caller, identity));
        if (newLink) await this.people.announceLinked(newLink);
        return session;
      } catch (error) {
        if (!(error instanceof LinkedMeanwhile) || attempt > 0) throw error;
      }
    }
  }

  /**
   * Signs the identity in to its tenant, links it into the caller's, or provisions a tenant for it; a person
   * linked into a tenant that has people already is told to them (`newLink`: announce it after the commit).
   */
  private async linkIn(uow: UnitOfWork, caller: Token | null, identity: IdentityRef): Promise<{ session: Session; newLink: IdentityLink | null }> {
    const now = this.clock.now();
    const existing = await uow.identities.find(identity.provider, identity.subject);
    let tenantId: string;
    let linked = false;
    let newLink: IdentityLink | null = null;
    if (caller) {
      if (existing && existing.tenantId !== caller.tenantId) {
        throw new DomainError('CONFLICT', `this ${identity.provider} identity is linked to another tenant; sign in without a bearer to use that tenant`);
      }
      if (!existing) {
        newLink = this.linkOf(identity, caller.tenantId, caller.id, now);
        if (!(await uow.identities.add(newLink))) throw new LinkedMeanwhile();
        await uow.events.emit(identityLinkedEvent(newLink, now));
      }
      tenantId = caller.tenantId;
      linked = true;
    } else if (existing) {
      tenantId = existing.tenantId;
    } else {
      const tenant = await this.tenancy.provisionTenant(uow, tenantNameFor(identity), now);
      if (!(await uow.identities.add(this.linkOf(identity, tenant.id, null, now)))) throw new LinkedMeanwhile();
      tenantId = tenant.id;
    }
    const issued = await this.tenancy.issueSession(uow, tenantId, identity, now);
    return { session: { secret: issued.secret, token: issued.token, tenantId, expiresAt: issued.token.expiresAt!, linked }, newLink };
  }

  private linkOf(identity: IdentityRef, tenantId: string, linkedByTokenId: string | null, at: Date): IdentityLink {
    return {
      id: this.ids.newId(IDENTITY_ID_PREFIX),
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
   * With a bearer, signing in links the identity to the caller's tenant: only a console session or a root
   * credential may (linksPeople), checked before anything else happens, so a refused bearer (403) spends no
   * code, no device flow and no password try, and links nobody.
   */
  private async mayLink(caller: Token | null): Promise<void> {
    if (!caller) return;
    const chain = await this.storage.read((uow) => uow.tokens.chain(caller.tenantId, caller.id));
    if (!linksPeople(chain)) {
      throw new DomainError(
        'SCOPE_REQUIRED',
        'linking a person to your tenant needs a console session or a root token (manage, and no spend cap, no max_rental_hours, no expiry on it or the tokens that issued it); ' +
          'sign in without a bearer to reach the identity\'s own tenant',
      );
    }
  }

  /** An identity provider's expected outcomes pass as they are; anything else is an outage (503). */
  private async idp<T>(what: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof DomainError) throw error;
      throw upstreamUnavailable(`the identity provider (${this.identity.name}) could not ${what}`, error, 'try again shortly');
    }
  }

  private requireCodeHost(): CodeHost {
    if (!this.codeHost) throw new DomainError('CONFLICT', 'device sign-in is not configured on this server; an operator sets GITHUB_CLIENT_ID to enable GitHub');
    return this.codeHost;
  }

  // ---- throttling -----------------------------------------------------------------------------------

  /** A code tried in a slot of the email's wrong-code allowance (codes are one secret wherever they are tried). */
  private codeTry<T>(email: string, work: () => Promise<T>): Promise<T> {
    return this.throttle.guard('code', email, '', isWrongCode, work);
  }

  /** An ask that may mail the address: past the address's allowance the provider is not asked, the answer is the same. */
  private async mayMail(email: string, ask: () => Promise<CodeSent>): Promise<CodeSent> {
    if (await this.allowance.take(email)) return ask();
    return { destination: maskAddress(email.trim().toLowerCase()) };
  }
}

/** An invitation (or account) of this address belongs to another tenant: it cannot move. */
const invitedElsewhere = (email: string, tenantId: string, renewed: boolean): DomainError =>
  new DomainError(
    'CONFLICT',
    `${email} belongs to tenant ${tenantId}; an identity cannot move to another tenant` +
      (renewed ? ' (its invitation there was renewed: a fresh temporary password was mailed)' : '; invite it without tenant_id, or with that tenant, to renew a pending invitation'),
  );

/** A new tenant is named after the person's address, or their provider when it gave none. */
const tenantNameFor = (identity: IdentityRef): string => identity.email ?? `${identity.provider} user ${identity.subject}`;

