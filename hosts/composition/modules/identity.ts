import type { Logger } from 'pino';
import { instanceCachingFactory, type DependencyContainer } from 'tsyringe';
import type { MikroStorage } from '../../../adapters/storage/mikro-storage.ts';
import { DatabaseMailAllowance } from '../../../core/identity/mail-allowance.ts';
import { PeopleService } from '../../../core/identity/people-service.ts';
import { InvitationService } from '../../../core/invitations/invitation-service.ts';
import { SignInService } from '../../../core/identity/sign-in-service.ts';
import type { RevocationFeed } from '../../../core/ports/revocations.ts';
import { TenancyService } from '../../../core/tenancy/tenancy-service.ts';
import { createSignInAdapters, type SignInAdapters } from '../auth.ts';
import type { ControlPlaneConfig } from '../config.ts';
import { basics, CLOCK, get, SECRETS, STORAGE } from './ports.ts';

/**
 * Sign-in throttles (docs/decisions.md, "Sign-in throttles"): in 15 minutes, 10 failed sign-ins per email and
 * client address, 50 per email from all addresses, 5 wrong codes per email (a code lives 15 minutes with 5 tries).
 */
const SIGN_IN_THROTTLE = { windowMs: 15 * 60_000, passwordPerClient: 10, passwordPerEmail: 50, codesPerEmail: 5 };
/** At most 5 asks that may mail one address in an hour (docs/decisions.md, "Mail to one address"). */
const MAIL_ALLOWANCE = { perAddress: 5, windowMs: 3_600_000 };

/** Tenants and tokens: authentication, issuing and revoking; revocations shared by the replicas when Redis is there. */
export function registerTenancy(container: DependencyContainer, parts: { config: ControlPlaneConfig; revocations: RevocationFeed | null }): void {
  container.register(TenancyService, {
    useFactory: instanceCachingFactory(
      (c) =>
        new TenancyService({
          ...basics(c),
          secrets: get(c, SECRETS),
          ...(parts.config.tokenCacheMs !== undefined && { tokenCacheMs: parts.config.tokenCacheMs }),
          ...(parts.revocations && { revocations: parts.revocations }),
        }),
    ),
  });
}

/** People: sign-in through the configured identity providers, the people linked to a tenant, and mail to them. */
export async function registerIdentity(
  container: DependencyContainer,
  parts: { config: ControlPlaneConfig; storage: MikroStorage; logger: Logger; publicUrl: string },
): Promise<SignInAdapters> {
  const { logger } = parts;
  const clock = get(container, CLOCK);
  const adapters = await createSignInAdapters(parts.config.auth ?? {}, { database: parts.storage, clock, logger, publicUrl: parts.publicUrl });
  const allowance = new DatabaseMailAllowance({ storage: parts.storage, clock, settings: MAIL_ALLOWANCE });
  // one allowance per address for every mail the plane sends: sign-in, notices, budget alerts
  container.register(DatabaseMailAllowance, { useValue: allowance });
  container.register(PeopleService, {
    useFactory: instanceCachingFactory(
      (c) =>
        new PeopleService({
          storage: get(c, STORAGE),
          clock: get(c, CLOCK),
          tenancy: c.resolve(TenancyService),
          mailer: adapters.mailer,
          allowance,
          onMailError: (error, mail) => logger.error({ err: error, to: mail.to, subject: mail.subject }, 'mail could not be sent'),
        }),
    ),
  });
  container.register(InvitationService, {
    useFactory: instanceCachingFactory(
      (c) =>
        new InvitationService({
          ...basics(c),
          secrets: get(c, SECRETS),
          allowance,
          mailer: adapters.mailer,
          people: c.resolve(PeopleService),
          onMailError: (error, mail) => logger.error({ err: error, to: mail.to, subject: mail.subject }, 'mail could not be sent'),
        }),
    ),
  });
  container.register(SignInService, {
    useFactory: instanceCachingFactory(
      (c) =>
        new SignInService({
          ...basics(c),
          secrets: get(c, SECRETS),
          tenancy: c.resolve(TenancyService),
          identity: adapters.identity,
          codeHost: adapters.codeHost,
          people: c.resolve(PeopleService),
          allowance,
          settings: { throttle: SIGN_IN_THROTTLE },
        }),
    ),
  });
  return adapters;
}
