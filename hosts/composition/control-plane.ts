import 'reflect-metadata';
import type { Router } from 'express';
import { pino, type Logger } from 'pino';
import { container as rootContainer } from 'tsyringe';
import { Cron } from 'croner';
import { SystemClock } from '../../adapters/clock/system-clock.ts';
import { providerModule } from '../../adapters/providers/registry.ts';
import { MikroStorage } from '../../adapters/storage/mikro-storage.ts';
import { PrometheusMetrics } from '../../adapters/metrics/prometheus-metrics.ts';
import { asBackground } from '../../adapters/providers/shared/pacing.ts';
import type { Resolver } from '../../adapters/webhooks/undici-transport.ts';
import type { Clock } from '../../core/ports/clock.ts';
import type { Payments } from '../../core/ports/payments.ts';
import type { Provider } from '../../core/ports/providers.ts';
import { AccountControl } from '../../core/billing/account-control.ts';
import { BudgetService } from '../../core/billing/budgets/budget-service.ts';
import { BudgetWatch } from '../../core/billing/budgets/budget-watch.ts';
import { BillingService } from '../../core/billing/billing-service.ts';
import { PaymentsService } from '../../core/billing/payments/payments-service.ts';
import { CatalogService } from '../../core/catalog/catalog-service.ts';
import { PeopleService } from '../../core/identity/people-service.ts';
import { InvitationService } from '../../core/invitations/invitation-service.ts';
import { SignInService } from '../../core/identity/sign-in-service.ts';
import { MarketService } from '../../core/market/market-service.ts';
import { PriceHistory } from '../../core/market/price-history.ts';
import { MarketSummaryService } from '../../core/market/summary-service.ts';
import { MeteringService } from '../../core/metering/metering-service.ts';
import { RentalService } from '../../core/rentals/rental-service.ts';
import { ReservationService } from '../../core/reservations/reservation-service.ts';
import { SpotClaimService } from '../../core/spot/spot-claim-service.ts';
import { SweepService } from '../../core/sweep/sweep-service.ts';
import { TenancyService } from '../../core/tenancy/tenancy-service.ts';
import { VolumeService } from '../../core/volumes/volume-service.ts';
import type { RouteDef } from '../http/route.ts';
import { loggableError } from '../http/error-log.ts';
import { ConfigError, type ControlPlaneConfig } from './config.ts';
import { priceListOf } from './metering-config.ts';
import { choosePayments, createPayments } from './payments.ts';
import { sharedState } from './redis.ts';
import { sweepFailed } from './sweep-log.ts';
import { chooseSecretBox, requireOpenableSecrets } from './secrets.ts';
import { createWebhooks } from './webhook-delivery.ts';
import { observeWebhookDeliveries } from './webhook-metrics.ts';
import { registerBilling, registerBudgets } from './modules/billing.ts';
import { registerCatalog } from './modules/catalog.ts';
import { buildHttp } from './modules/http.ts';
import { registerIdentity, registerTenancy } from './modules/identity.ts';
import { registerKernel } from './modules/kernel.ts';
import { registerMarket } from './modules/market.ts';
import { registerPayments } from './modules/payments.ts';
import { basics, get, PROVIDERS } from './modules/ports.ts';
import { registerProviders } from './modules/providers.ts';
import { registerRentals } from './modules/rentals.ts';
import type { ControlPlaneServices } from './services.ts';

export type { ControlPlaneServices } from './services.ts';

export interface ControlPlane {
  services: ControlPlaneServices;
  /** Mount it anywhere: it parses JSON, authenticates, validates and answers `{detail}` on errors. */
  router: Router;
  routes: readonly RouteDef[];
  openApi: object;
  storage: MikroStorage;
  clock: Clock;
  logger: Logger;
  /** The providers as the core calls them (under their deadlines, counted in the metrics). */
  providers: readonly Provider[];
  /** The card processor in use (Stripe, the embedded one, or the one an embedding program gave). */
  processor: Payments;
  /** What GET /metrics renders; the HTTP host observes requests into it (app.ts). */
  metrics: PrometheusMetrics;
  close(): Promise<void>;
}

/** Seams for embedding programs and tests: swap the clock, the logger, or an adapter. */
export interface ControlPlaneOverrides {
  clock?: Clock;
  logger?: Logger;
  /** Provider instances to use instead of those the configuration names (tests, embedding programs). */
  providers?: Provider[];
  /** A card processor to use instead of the configured one. */
  payments?: Payments;
  /** Wraps each provider the control plane uses (tests inject upstream faults; an embedding program may trace calls). */
  wrapProvider?: (provider: Provider) => Provider;
  /** How webhook hosts are resolved (tests play DNS rebinding); default the system's resolver. */
  webhookResolver?: Resolver;
}

/**
 * The composition root, read as the wiring diagram (docs/decisions.md, "Composition as the wiring diagram"):
 * adapters are picked from the configuration, each area registers its services in the container
 * (hosts/composition/modules/), the services are resolved here once, and the hosts are built on them.
 */
export async function createControlPlane(config: ControlPlaneConfig, overrides: ControlPlaneOverrides = {}): Promise<ControlPlane> {
  // every `err` logged (the sweep, the market refresh) without the SQL values a database error echoes
  const logger = overrides.logger ?? pino({ level: config.logLevel, base: { service: 'gpu-control-plane' }, serializers: { err: loggableError } });
  // refused before anything opens: the embedded processor, unasked, beside a real cloud
  const enabled = overrides.providers?.map((p) => p.name) ?? config.providers?.map((p) => p.name) ?? [];
  const publicUrl = config.publicUrl ?? 'http://localhost:8080';
  const paymentsConfig = overrides.payments ? null : choosePayments(config.payments, enabled.filter((name) => providerModule(name)?.real));
  const priceList = priceListOf(config.metering);
  if (!priceList.ok) throw new ConfigError(`invalid configuration:\n${priceList.problems.map((p) => `  METERED_PRICES (metering.prices): ${p}`).join('\n')}`);

  // storage
  const storage = await MikroStorage.open(config.storage);
  const metrics = new PrometheusMetrics();
  storage.observe(metrics);
  // the embedded processor keeps its checkouts in our database, so an unpaid one outlives a restart
  const processor = overrides.payments ?? (await createPayments(paymentsConfig!, publicUrl, storage));
  // rate-limit counters and revocations shared by the replicas; nothing waits for Redis to answer
  const shared = config.redis ? sharedState(config.redis, logger) : null;
  const clock = overrides.clock ?? new SystemClock();
  const container = rootContainer.createChildContainer();
  registerKernel(container, { config, logger, clock, storage, metrics });

  // the areas, each registering its own services
  registerTenancy(container, { config, revocations: shared?.revocations ?? null });
  const clouds = registerProviders(container, {
    config,
    runtime: { clock, database: storage },
    metrics,
    ...(overrides.providers && { given: overrides.providers }),
    ...(overrides.wrapProvider && { wrap: overrides.wrapProvider }),
  });
  registerMarket(container, { config, storage, rentalsOpen: config.market?.rentalsOpen ?? !clouds.anyReal });
  registerRentals(container, { config, providerConcurrency: clouds.concurrency });
  registerPayments(container, { config, processor, publicUrl });
  registerBilling(container, { config, prices: priceList.prices, deadlines: clouds.deadlines, providerConcurrency: clouds.concurrency });
  // after the database opened: the embedded default keeps its key in the database's directory
  let secretBox: ReturnType<typeof chooseSecretBox>;
  try {
    secretBox = chooseSecretBox(config);
  } catch (error) {
    await storage.close();
    throw error;
  }
  registerCatalog(container, { secretBox: secretBox.box });
  const signIn = await registerIdentity(container, { config, storage, logger, publicUrl });
  registerBudgets(container, { mailer: signIn.mailer, logger });
  // every transaction that charges is watched by the budgets, in it, before it commits
  storage.watchCharges(container.resolve(BudgetWatch));
  const webhooks = createWebhooks(config.webhooks, {
    ...basics(container),
    secretBox: secretBox.box,
    logger,
    ...(overrides.webhookResolver && { resolver: overrides.webhookResolver }),
  });
  observeWebhookDeliveries(webhooks.worker, metrics);

  // resolved once, here and nowhere else
  const services: ControlPlaneServices = {
    tenancy: container.resolve(TenancyService),
    market: container.resolve(MarketService),
    marketSummary: container.resolve(MarketSummaryService),
    billing: container.resolve(BillingService),
    rentals: container.resolve(RentalService),
    accountControl: container.resolve(AccountControl),
    sweep: container.resolve(SweepService),
    payments: container.resolve(PaymentsService),
    signIn: container.resolve(SignInService),
    people: container.resolve(PeopleService),
    invitations: container.resolve(InvitationService),
    catalog: container.resolve(CatalogService),
    volumes: container.resolve(VolumeService),
    metering: container.resolve(MeteringService),
    reservations: container.resolve(ReservationService),
    webhooks: webhooks.service,
    webhookDeliveries: webhooks.worker,
    spotClaims: container.resolve(SpotClaimService),
    priceHistory: container.resolve(PriceHistory),
    budgets: container.resolve(BudgetService),
    budgetWatch: container.resolve(BudgetWatch),
  };
  try {
    await requireOpenableSecrets(services.catalog, secretBox.source);
  } catch (error) {
    await webhooks.close();
    await storage.close();
    throw error;
  }

  // the jobs: the billing sweep every minute (across processes one at a time: storage.exclusive), and every
  // provider's snapshot kept warm; `protect` skips a tick while the last one still runs
  const sweepJob =
    config.billing?.sweep === false
      ? null
      : new Cron('30 * * * * *', { protect: true, unref: true, catch: sweepFailed(logger) }, async () => {
          const report = await services.sweep.run();
          if (report.ran) logger.info({ sweep: report }, 'billing sweep');
        });
  const refreshJob =
    config.market?.backgroundRefresh === false
      ? null
      : new Cron('0 * * * * *', { protect: true, unref: true, catch: (error) => logger.error({ err: error }, 'market refresh failed') }, () =>
          asBackground(() => services.market.refreshDue()),
        );

  // the hosts
  const http = buildHttp(services, { config, storage, metrics, logger, processor, clouds, signIn, shared });

  return {
    services,
    ...http,
    storage,
    clock,
    logger,
    providers: get(container, PROVIDERS),
    processor,
    metrics,
    async close() {
      refreshJob?.stop();
      sweepJob?.stop();
      // a pass in flight ends its money step and stops; webhook rounds in flight end, the rest stays in the outbox
      await services.sweep.stop();
      await services.budgetWatch.idle();
      await webhooks.close();
      await shared?.close();
      await storage.close();
      container.clearInstances();
    },
  };
}
