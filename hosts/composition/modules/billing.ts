import { instanceCachingFactory, type DependencyContainer } from 'tsyringe';
import { asBackground } from '../../../adapters/providers/shared/pacing.ts';
import { AccountControl } from '../../../core/billing/account-control.ts';
import { BillingService } from '../../../core/billing/billing-service.ts';
import { PaymentsService } from '../../../core/billing/payments/payments-service.ts';
import { BalanceAlerts } from '../../../core/events/balance-alerts.ts';
import { BudgetService } from '../../../core/billing/budgets/budget-service.ts';
import { BudgetWatch } from '../../../core/billing/budgets/budget-watch.ts';
import { DatabaseMailAllowance } from '../../../core/identity/mail-allowance.ts';
import type { Mailer } from '../../../core/ports/mailer.ts';
import type { Logger } from 'pino';
import { MarketService } from '../../../core/market/market-service.ts';
import { MeteringService } from '../../../core/metering/metering-service.ts';
import type { PriceList } from '../../../core/metering/prices.ts';
import { RentalService } from '../../../core/rentals/rental-service.ts';
import { RecoveryStarter } from '../../../core/recovery/recovery-starter.ts';
import { ReservationStarter } from '../../../core/reservations/reservation-starter.ts';
import { SpotClaimKeeper } from '../../../core/spot/spot-claim-keeper.ts';
import { SweepService } from '../../../core/sweep/sweep-service.ts';
import { TenancyService } from '../../../core/tenancy/tenancy-service.ts';
import type { CallDeadlines } from '../../../core/upstream/call-deadlines.ts';
import { VolumeExpiry } from '../../../core/volumes/volume-expiry.ts';
import { VolumeMeter } from '../../../core/volumes/volume-meter.ts';
import type { ControlPlaneConfig } from '../config.ts';
import { basics, CLOCK, get, METRICS, PROVIDERS, STORAGE } from './ports.ts';

/** A rental whose machine no provider ever showed is failed and refunded after this long. */
const PROVISIONING_DEADLINE_MS = 15 * 60_000;
/** Runaway protection: an account burning more than $1,000 an hour trips its breaker (configurable). */
const DEFAULT_MAX_BURN_CENTS_PER_HOUR = 100_000;

/** The account and its ledger, metered usage, the operator's controls, and the sweep that conducts them all. */
export function registerBilling(
  container: DependencyContainer,
  parts: { config: ControlPlaneConfig; prices: PriceList; deadlines: CallDeadlines; providerConcurrency: number },
): void {
  const { config } = parts;
  container.register(BillingService, { useFactory: instanceCachingFactory((c) => new BillingService(basics(c))) });
  container.register(AccountControl, {
    useFactory: instanceCachingFactory((c) => new AccountControl({ storage: get(c, STORAGE), clock: get(c, CLOCK), rentals: c.resolve(RentalService) })),
  });
  container.register(MeteringService, { useFactory: instanceCachingFactory((c) => new MeteringService({ ...basics(c), prices: parts.prices })) });
  container.register(SweepService, {
    useFactory: instanceCachingFactory((c) => {
      const bookings = { ...basics(c), rentals: c.resolve(RentalService), market: c.resolve(MarketService), providers: get(c, PROVIDERS) };
      return new SweepService({
        storage: get(c, STORAGE),
        clock: get(c, CLOCK),
        rentals: c.resolve(RentalService),
        providers: get(c, PROVIDERS),
        payments: c.resolve(PaymentsService),
        metering: c.resolve(MeteringService),
        volumes: new VolumeMeter({ storage: get(c, STORAGE), clock: get(c, CLOCK), usage: c.resolve(MeteringService) }),
        volumeWindows: new VolumeExpiry({ ...basics(c), providers: get(c, PROVIDERS), usage: c.resolve(MeteringService) }),
        metrics: get(c, METRICS),
        tenancy: c.resolve(TenancyService),
        balanceAlerts: new BalanceAlerts(basics(c)),
        budgets: c.resolve(BudgetWatch),
        reservations: new ReservationStarter(bookings),
        spotClaims: new SpotClaimKeeper(bookings),
        recoveries: new RecoveryStarter(bookings),
        deadlines: parts.deadlines,
        // the pass's calls wait behind a person's in each provider's pacer
        background: asBackground,
        settings: {
          provisioningDeadlineMs: PROVISIONING_DEADLINE_MS,
          defaultMaxBurnCentsPerHour: config.billing?.defaultMaxBurnCentsPerHour ?? DEFAULT_MAX_BURN_CENTS_PER_HOUR,
          providerConcurrency: parts.providerConcurrency,
          ...(config.billing?.passBudgetMs !== undefined && { passBudgetMs: config.billing.passBudgetMs }),
        },
      });
    }),
  });
}

/**
 * Monthly budgets: what a tenant sets, and the watch that every charging transaction reports to before it commits
 * (it stops machines and mails the people after the commit). The mail goes out through the sign-in adapters' mailer.
 */
export function registerBudgets(container: DependencyContainer, parts: { mailer: Mailer; logger: Logger }): void {
  container.register(BudgetService, { useFactory: instanceCachingFactory((c) => new BudgetService({ ...basics(c), followUp: c.resolve(BudgetWatch) })) });
  container.register(BudgetWatch, {
    useFactory: instanceCachingFactory(
      (c) =>
        new BudgetWatch({
          storage: get(c, STORAGE),
          clock: get(c, CLOCK),
          rentals: c.resolve(RentalService),
          mailer: parts.mailer,
          allowance: c.resolve(DatabaseMailAllowance),
          onError: (error) => parts.logger.error({ err: error }, 'budget stop or alert mail failed (the sweep tries again)'),
        }),
    ),
  });
}
