import 'reflect-metadata';
import express, { type Router } from 'express';
import { pino, type Logger } from 'pino';
import { container as rootContainer, instanceCachingFactory, type DependencyContainer } from 'tsyringe';
import { Cron } from 'croner';
import { SystemClock } from '../../adapters/clock/system-clock.ts';
import { providerModule, sshUserOf } from '../../adapters/providers/registry.ts';
import type { ProviderRuntime } from '../../adapters/providers/provider-module.ts';
import { NodeSecrets, RandomIds } from '../../adapters/crypto/node-secrets.ts';
import { MikroStorage } from '../../adapters/storage/mikro-storage.ts';
import { MikroMarketSnapshotStore } from '../../adapters/storage/stores/market-snapshot-store.ts';
import { MikroPriceHistoryStore } from '../../adapters/storage/stores/price-history-store.ts';
import { PriceHistory } from '../../core/market/price-history.ts';
import { marketHistoryRoutes } from '../http/routes/market-history-routes.ts';
import { providerRoutes } from '../http/routes/provider-routes.ts';
import { sandboxRoutes } from '../http/routes/sandbox-routes.ts';
import { SandboxChaos } from './sandbox-chaos.ts';
import { SandboxProvider } from '../../adapters/providers/sandbox/adapter.ts';
import type { Clock } from '../../core/ports/clock.ts';
import type { Ids, Secrets } from '../../core/ports/ids.ts';
import type { Storage } from '../../core/ports/storage.ts';
import type { Provider } from '../../core/ports/providers.ts';
import { MarketService } from '../../core/market/market-service.ts';
import { MarketSummaryService } from '../../core/market/summary-service.ts';
import { BillingService } from '../../core/billing/billing-service.ts';
import { RentalService } from '../../core/rentals/rental-service.ts';
import { AccountControl } from '../../core/billing/account-control.ts';
import { SweepService } from '../../core/sweep/sweep-service.ts';
import { DEFAULT_PROVIDER_CONCURRENCY } from '../../core/sweep/settings.ts';
import { PaymentsService } from '../../core/billing/payments/payments-service.ts';
import type { Payments } from '../../core/ports/payments.ts';
import { ManualPayments } from '../../adapters/payments/manual/adapter.ts';
import { choosePayments, createPayments } from './payments.ts';
import { manualCheckoutRoutes, stripeWebhookRoutes } from '../http/routes/payment-routes.ts';
import { TenancyService } from '../../core/tenancy/tenancy-service.ts';
import { errorHandler } from '../http/error-handler.ts';
import { loggableError } from '../http/error-log.ts';
import { API_VERSION, buildOpenApi } from '../http/openapi.ts';
import type { RouteDef } from '../http/route.ts';
import { buildRouter } from '../http/router.ts';
import { rateLimiters } from '../http/rate-limit.ts';
import { MCP_PATH, mcpEndpoint } from '../mcp/http-endpoint.ts';
import { marketRoutes } from '../http/routes/market-routes.ts';
import { billingRoutes } from '../http/routes/billing-routes.ts';
import { instanceRoutes } from '../http/routes/instance-routes.ts';
import { operatorRoutes } from '../http/routes/operator-routes.ts';
import { metaRoutes } from '../http/routes/meta-routes.ts';
import { tenancyRoutes } from '../http/routes/tenancy-routes.ts';
import type { ControlPlaneConfig } from './config.ts';
import { createSignInAdapters } from './auth.ts';
import { authorizeRoutes } from '../http/routes/authorize-routes.ts';
import { authRoutes } from '../http/routes/auth-routes.ts';
import { SignInService } from '../../core/identity/sign-in-service.ts';
import { PeopleService } from '../../core/identity/people-service.ts';
import { DatabaseMailAllowance } from '../../core/identity/mail-allowance.ts';
import { identityRoutes } from '../http/routes/identity-routes.ts';
import { CatalogService } from '../../core/catalog/catalog-service.ts';
import { NodeSha256 } from '../../adapters/crypto/aes-gcm-secret-box.ts';
import { catalogRoutes } from '../http/routes/catalog-routes.ts';
import { chooseSecretBox, requireOpenableSecrets } from './secrets.ts';
import { MeteringService } from '../../core/metering/metering-service.ts';
import { meteringRoutes } from '../http/routes/metering-routes.ts';
import { ConfigError } from './config.ts';
import { priceListOf } from './metering-config.ts';
import { VolumeExpiry } from '../../core/volumes/volume-expiry.ts';
import { DEFAULT_MAX_GB_PER_TENANT, VolumeService } from '../../core/volumes/volume-service.ts';
import { VolumeMeter } from '../../core/volumes/volume-meter.ts';
import { volumeRoutes } from '../http/routes/volume-routes.ts';
import { templateNode } from './template-node.ts';
import { ReservationService } from '../../core/reservations/reservation-service.ts';
import { ReservationStarter } from '../../core/reservations/reservation-starter.ts';
import { reservationRoutes } from '../http/routes/reservation-routes.ts';
import { SpotClaimService } from '../../core/spot/spot-claim-service.ts';
import { SpotClaimKeeper } from '../../core/spot/spot-claim-keeper.ts';
import { spotClaimRoutes } from '../http/routes/spot-claim-routes.ts';
import { searchFilterOf } from '../http/schemas/catalog.ts';
import { PrometheusMetrics } from '../../adapters/metrics/prometheus-metrics.ts';
import type { Metrics } from '../../core/ports/metrics.ts';
import { instrumentedProvider } from './instrumented-provider.ts';
import { CallDeadlines } from '../../core/upstream/call-deadlines.ts';
import { asBackground } from '../../adapters/providers/shared/pacing.ts';
import { readinessProbe } from './readiness.ts';
import { monitoringRoutes } from '../http/routes/monitoring-routes.ts';
import { observeWebhookDeliveries } from './webhook-metrics.ts';
import type { WebhookService } from '../../core/webhooks/webhook-service.ts';
import type { DeliveryWorker } from '../../core/webhooks/delivery-worker.ts';
import type { Resolver } from '../../adapters/webhooks/undici-transport.ts';
import { createWebhooks } from './webhook-delivery.ts';
import { BalanceAlerts } from '../../core/events/balance-alerts.ts';
import { webhookRoutes } from '../http/routes/webhook-routes.ts';
import { sharedState } from './redis.ts';

/** Injection tokens of the container. */
export const TOKENS = {
  config: 'Config',
  logger: 'Logger',
  clock: 'Clock',
  ids: 'Ids',
  secrets: 'Secrets',
  storage: 'Storage',
  tenancy: 'TenancyService',
  providers: 'Providers',
  market: 'MarketService',
  marketSummary: 'MarketSummaryService',
  billing: 'BillingService',
  rentals: 'RentalService',
  accountControl: 'AccountControl',
  sweep: 'SweepService',
  payments: 'Payments',
  paymentsService: 'PaymentsService',
  signIn: 'SignInService',
  people: 'PeopleService',
  catalog: 'CatalogService',
  volumes: 'VolumeService',
  metering: 'MeteringService',
  reservations: 'ReservationService',
  /** The Metrics port (core/ports/metrics.ts): services that report events resolve it. */
  metrics: 'Metrics',
  spotClaims: 'SpotClaimService',
  priceHistory: 'PriceHistory',
} as const;

export interface ControlPlaneServices {
  tenancy: TenancyService;
  market: MarketService;
  marketSummary: MarketSummaryService;
  billing: BillingService;
  rentals: RentalService;
  accountControl: AccountControl;
  sweep: SweepService;
  payments: PaymentsService;
  signIn: SignInService;
  people: PeopleService;
  catalog: CatalogService;
  volumes: VolumeService;
  metering: MeteringService;
  reservations: ReservationService;
  webhooks: WebhookService;
  /** The outbox's delivery worker: `addObserver` watches its attempts (metrics). */
  webhookDeliveries: DeliveryWorker;
  spotClaims: SpotClaimService;
  priceHistory: PriceHistory;
}

export interface ControlPlane {
  services: ControlPlaneServices;
  /** Mount it anywhere: it parses JSON, authenticates, validates and answers `{detail}` on errors. */
  router: Router;
  routes: readonly RouteDef[];
  openApi: object;
  storage: MikroStorage;
  clock: Clock;
  logger: Logger;
  container: DependencyContainer;
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

/** The market's rules that SPEC.md fixes: 60 s between refreshes, 10 minutes of stale summary at most. */
const REFRESH_INTERVAL_MS = 60_000;
const STALE_LIMIT_MS = 600_000;
/** Auto-recharge payments allowed in any rolling 24 hours (docs/decisions.md, "Payments"). */
const MAX_PAYMENTS_PER_24H = 3;
/**
 * Sign-in throttles (docs/decisions.md, "Sign-in throttles"): in 15 minutes, 10 failed sign-ins per email and
 * client address, 50 per email from all addresses, 5 wrong codes per email (a code lives 15 minutes with 5 tries).
 */
const SIGN_IN_THROTTLE = { windowMs: 15 * 60_000, passwordPerClient: 10, passwordPerEmail: 50, codesPerEmail: 5 };
/** At most 5 asks that may mail one address in an hour (docs/decisions.md, "Mail to one address"). */
const MAIL_ALLOWANCE = { perAddress: 5, windowMs: 3_600_000 };
/** A rental whose machine no provider ever showed is failed and refunded after this long. */
const PROVISIONING_DEADLINE_MS = 15 * 60_000;
/** Runaway protection: an account burning more than $1,000 an hour trips its breaker (configurable). */
const DEFAULT_MAX_BURN_CENTS_PER_HOUR = 100_000;

/** What most services take: the storage, the clock and the id source. */
const basics = (c: DependencyContainer) => ({
  storage: c.resolve<Storage>(TOKENS.storage),
  clock: c.resolve<Clock>(TOKENS.clock),
  ids: c.resolve<Ids>(TOKENS.ids),
});

function buildProviders(config: ControlPlaneConfig, runtime: ProviderRuntime): { providers: Provider[]; anyReal: boolean } {
  const settings = config.providers ?? [{ name: 'sandbox', config: {} }];
  let anyReal = false;
  const providers = settings.map(({ name, config: providerConfig }) => {
    const module = providerModule(name);
    if (!module) throw new Error(`unknown provider "${name}"`);
    anyReal ||= module.real;
    return module.create(providerConfig, runtime);
  });
  return { providers, anyReal };
}

/** The composition root: picks adapters from configuration and wires the core to them. */
export async function createControlPlane(config: ControlPlaneConfig, overrides: ControlPlaneOverrides = {}): Promise<ControlPlane> {
  // every `err` logged (the sweep, the market refresh) without the SQL values a database error echoes
  const logger = overrides.logger ?? pino({ level: config.logLevel, base: { service: 'gpu-control-plane' }, serializers: { err: loggableError } });
  // refused before anything opens: the embedded processor, unasked, beside a real cloud
  const enabled = overrides.providers?.map((p) => p.name) ?? config.providers?.map((p) => p.name) ?? [];
  const publicUrl = config.publicUrl ?? 'http://localhost:8080';
  const paymentsConfig = overrides.payments ? null : choosePayments(config.payments, enabled.filter((name) => providerModule(name)?.real));
  const priceList = priceListOf(config.metering);
  if (!priceList.ok) throw new ConfigError(`invalid configuration:\n${priceList.problems.map((p) => `  METERED_PRICES (metering.prices): ${p}`).join('\n')}`);
  const storage = await MikroStorage.open(config.storage);
  const metrics = new PrometheusMetrics();
  storage.observe(metrics);
  // the embedded processor keeps its checkouts in our database, so an unpaid one outlives a restart
  const payments = overrides.payments ?? (await createPayments(paymentsConfig!, publicUrl, storage));

  // rate-limit counters and revocations shared by the replicas; nothing waits for Redis to answer
  const shared = config.redis ? sharedState(config.redis, logger) : null;
  const container = rootContainer.createChildContainer();
  container.register(TOKENS.config, { useValue: config });
  container.register(TOKENS.logger, { useValue: logger });
  container.register<Clock>(TOKENS.clock, { useValue: overrides.clock ?? new SystemClock() });
  container.register<Ids>(TOKENS.ids, { useValue: new RandomIds() });
  container.register<Secrets>(TOKENS.secrets, { useValue: new NodeSecrets() });
  container.register<Storage>(TOKENS.storage, { useValue: storage });
  container.register(TOKENS.tenancy, {
    useFactory: instanceCachingFactory(
      (c) =>
        new TenancyService({
          ...basics(c),
          secrets: c.resolve<Secrets>(TOKENS.secrets),
          ...(config.tokenCacheMs !== undefined && { tokenCacheMs: config.tokenCacheMs }),
          ...(shared && { revocations: shared.revocations }),
        }),
    ),
  });

  const clock = container.resolve<Clock>(TOKENS.clock);
  const built = overrides.providers
    ? { providers: overrides.providers, anyReal: overrides.providers.some((p) => providerModule(p.name)?.real ?? false) }
    : buildProviders(config, { clock, database: storage });
  const rentalsOpen = config.market?.rentalsOpen ?? !built.anyReal;
  const timeoutMs = config.market?.providerTimeoutMs ?? 10_000;
  container.register<Metrics>(TOKENS.metrics, { useValue: metrics });
  // outermost, so faults a test injects count as the provider's errors
  const providers = overrides.wrapProvider ? built.providers.map(overrides.wrapProvider) : built.providers;
  // the simulated cloud itself (never a wrapper), for the operator's chaos routes
  const sandbox = built.providers.find((provider): provider is SandboxProvider => provider instanceof SandboxProvider) ?? null;
  // every call under its deadline, and a call cut there counted as the provider's failure
  const deadlines = new CallDeadlines(
    { ...(config.upstream?.createTimeoutMs !== undefined && { createMs: config.upstream.createTimeoutMs }), ...(config.upstream?.callTimeoutMs !== undefined && { callMs: config.upstream.callTimeoutMs }) },
    (provider, operation) => metrics.providerCallCut(provider, operation),
  );
  const providerConcurrency = config.upstream?.concurrency ?? DEFAULT_PROVIDER_CONCURRENCY;
  container.register<Provider[]>(TOKENS.providers, { useValue: providers.map((provider) => instrumentedProvider(deadlines.bound(provider), metrics)) });
  // on PostgreSQL several replicas may run: one lists each provider per interval and the others load its offers
  const sharedSnapshots = config.market?.sharedSnapshots ?? storage.target.kind === 'postgres';
  container.register(TOKENS.market, {
    useFactory: instanceCachingFactory(
      (c) =>
        new MarketService(
          c.resolve<Provider[]>(TOKENS.providers),
          c.resolve<Clock>(TOKENS.clock),
          {
            markupBps: config.market?.markupBps ?? 0,
            rentalsOpen,
            timing: { refreshIntervalMs: config.market?.refreshIntervalMs ?? REFRESH_INTERVAL_MS, timeoutMs, maxAgeMs: STALE_LIMIT_MS },
          },
          sharedSnapshots ? new MikroMarketSnapshotStore((sql, params) => storage.execute(sql, params)) : null,
          c.resolve<PriceHistory>(TOKENS.priceHistory),
        ),
    ),
  });
  container.register(TOKENS.priceHistory, {
    useFactory: instanceCachingFactory(
      (c) =>
        new PriceHistory({
          store: new MikroPriceHistoryStore((sql, params) => storage.execute(sql, params)),
          clock: c.resolve<Clock>(TOKENS.clock),
          providers: c.resolve<Provider[]>(TOKENS.providers).map((provider) => provider.name),
        }),
    ),
  });
  container.register(TOKENS.marketSummary, {
    useFactory: instanceCachingFactory(
      (c) =>
        new MarketSummaryService(c.resolve<MarketService>(TOKENS.market), c.resolve<Storage>(TOKENS.storage), c.resolve<Clock>(TOKENS.clock), {
          cacheMs: REFRESH_INTERVAL_MS,
          staleLimitMs: STALE_LIMIT_MS,
          leaseMs: timeoutMs + 30_000,
          waitMs: timeoutMs + 1_000,
          rentalsOpen,
        }),
    ),
  });

  container.register(TOKENS.volumes, {
    useFactory: instanceCachingFactory(
      (c) =>
        new VolumeService({
          ...basics(c),
          providers: c.resolve<Provider[]>(TOKENS.providers),
          limits: { maxGbPerTenant: config.volumes?.maxGbPerTenant ?? DEFAULT_MAX_GB_PER_TENANT },
        }),
    ),
  });
  container.register(TOKENS.billing, {
    useFactory: instanceCachingFactory(
      (c) => new BillingService(basics(c)),
    ),
  });

  container.register(TOKENS.rentals, {
    useFactory: instanceCachingFactory(
      (c) =>
        new RentalService({
          ...basics(c),
          secrets: c.resolve<Secrets>(TOKENS.secrets),
          market: c.resolve<MarketService>(TOKENS.market),
          providers: c.resolve<Provider[]>(TOKENS.providers),
          catalog: c.resolve<CatalogService>(TOKENS.catalog),
          volumes: c.resolve<VolumeService>(TOKENS.volumes),
          metrics: c.resolve<Metrics>(TOKENS.metrics),
          providerConcurrency,
          ...(config.upstream?.rentTimeoutMs !== undefined && { answerWithinMs: config.upstream.rentTimeoutMs }),
        }),
    ),
  });

  const returnUrl = config.checkoutReturnUrl ?? `${publicUrl.replace(/\/+$/, '')}/`;
  container.register<Payments>(TOKENS.payments, { useValue: payments });
  container.register(TOKENS.paymentsService, {
    useFactory: instanceCachingFactory(
      (c) =>
        new PaymentsService({
          ...basics(c),
          payments: c.resolve<Payments>(TOKENS.payments),
          settings: {
            maxPaymentsPer24h: config.billing?.maxPaymentsPer24h ?? MAX_PAYMENTS_PER_24H,
            successUrl: `${returnUrl}?checkout=success&session_id={CHECKOUT_SESSION_ID}`,
            cancelUrl: `${returnUrl}?checkout=cancelled&session_id={CHECKOUT_SESSION_ID}`,
          },
        }),
    ),
  });
  container.register(TOKENS.accountControl, {
    useFactory: instanceCachingFactory(
      (c) => new AccountControl({ storage: c.resolve<Storage>(TOKENS.storage), clock: c.resolve<Clock>(TOKENS.clock), rentals: c.resolve<RentalService>(TOKENS.rentals) }),
    ),
  });
  container.register(TOKENS.metering, {
    useFactory: instanceCachingFactory((c) => new MeteringService({ ...basics(c), prices: priceList.prices })),
  });
  container.register(TOKENS.reservations, {
    useFactory: instanceCachingFactory(
      (c) =>
        new ReservationService({
          ...basics(c),
          secrets: c.resolve<Secrets>(TOKENS.secrets),
          market: c.resolve<MarketService>(TOKENS.market),
          providers: c.resolve<Provider[]>(TOKENS.providers),
          rentals: c.resolve<RentalService>(TOKENS.rentals),
          catalog: c.resolve<CatalogService>(TOKENS.catalog),
          searchFilter: searchFilterOf,
        }),
    ),
  });
  container.register(TOKENS.spotClaims, {
    useFactory: instanceCachingFactory(
      (c) =>
        new SpotClaimService({
          ...basics(c),
          market: c.resolve<MarketService>(TOKENS.market),
          providers: c.resolve<Provider[]>(TOKENS.providers),
          rentals: c.resolve<RentalService>(TOKENS.rentals),
          catalog: c.resolve<CatalogService>(TOKENS.catalog),
          searchFilter: searchFilterOf,
        }),
    ),
  });
  container.register(TOKENS.sweep, {
    useFactory: instanceCachingFactory(
      (c) =>
        new SweepService({
          storage: c.resolve<Storage>(TOKENS.storage),
          clock: c.resolve<Clock>(TOKENS.clock),
          rentals: c.resolve<RentalService>(TOKENS.rentals),
          providers: c.resolve<Provider[]>(TOKENS.providers),
          payments: c.resolve<PaymentsService>(TOKENS.paymentsService),
          metering: c.resolve<MeteringService>(TOKENS.metering),
          volumes: new VolumeMeter({ storage: c.resolve<Storage>(TOKENS.storage), clock: c.resolve<Clock>(TOKENS.clock), usage: c.resolve<MeteringService>(TOKENS.metering) }),
          volumeWindows: new VolumeExpiry({ ...basics(c), providers: c.resolve<Provider[]>(TOKENS.providers) }),
          metrics: c.resolve<Metrics>(TOKENS.metrics),
          tenancy: c.resolve<TenancyService>(TOKENS.tenancy),
          balanceAlerts: new BalanceAlerts(basics(c)),
          reservations: new ReservationStarter({
            ...basics(c),
            rentals: c.resolve<RentalService>(TOKENS.rentals),
            market: c.resolve<MarketService>(TOKENS.market),
            providers: c.resolve<Provider[]>(TOKENS.providers),
            searchFilter: searchFilterOf,
          }),
          spotClaims: new SpotClaimKeeper({
            ...basics(c),
            rentals: c.resolve<RentalService>(TOKENS.rentals),
            market: c.resolve<MarketService>(TOKENS.market),
            providers: c.resolve<Provider[]>(TOKENS.providers),
            searchFilter: searchFilterOf,
          }),
          deadlines,
          // the pass's calls wait behind a person's in each provider's pacer
          background: asBackground,
          settings: {
            provisioningDeadlineMs: PROVISIONING_DEADLINE_MS,
            defaultMaxBurnCentsPerHour: config.billing?.defaultMaxBurnCentsPerHour ?? DEFAULT_MAX_BURN_CENTS_PER_HOUR,
            providerConcurrency,
            ...(config.billing?.passBudgetMs !== undefined && { passBudgetMs: config.billing.passBudgetMs }),
          },
        }),
    ),
  });

  // after the database opened: the embedded default keeps its key in the database's directory
  let secretBox: ReturnType<typeof chooseSecretBox>;
  try {
    secretBox = chooseSecretBox(config);
  } catch (error) {
    await storage.close();
    throw error;
  }
  container.register(TOKENS.catalog, {
    useFactory: instanceCachingFactory((c) => new CatalogService({ ...basics(c), hashing: new NodeSha256(), secretBox: secretBox.box })),
  });

  const signInAdapters = await createSignInAdapters(config.auth ?? {}, { database: storage, clock: container.resolve<Clock>(TOKENS.clock), logger, publicUrl });
  const mailAllowance = new DatabaseMailAllowance({ storage, clock: container.resolve<Clock>(TOKENS.clock), settings: MAIL_ALLOWANCE });
  container.register(TOKENS.people, {
    useFactory: instanceCachingFactory(
      (c) =>
        new PeopleService({
          storage: c.resolve<Storage>(TOKENS.storage),
          clock: c.resolve<Clock>(TOKENS.clock),
          tenancy: c.resolve<TenancyService>(TOKENS.tenancy),
          mailer: signInAdapters.mailer,
          allowance: mailAllowance,
          onMailError: (error, mail) => logger.error({ err: error, to: mail.to, subject: mail.subject }, 'mail could not be sent'),
        }),
    ),
  });
  container.register(TOKENS.signIn, {
    useFactory: instanceCachingFactory(
      (c) =>
        new SignInService({
          ...basics(c),
          secrets: c.resolve<Secrets>(TOKENS.secrets),
          tenancy: c.resolve<TenancyService>(TOKENS.tenancy),
          identity: signInAdapters.identity,
          codeHost: signInAdapters.codeHost,
          people: c.resolve<PeopleService>(TOKENS.people),
          allowance: mailAllowance,
          settings: { throttle: SIGN_IN_THROTTLE },
        }),
    ),
  });

  const webhooks = createWebhooks(config.webhooks, {
    ...basics(container),
    secretBox: secretBox.box,
    logger,
    ...(overrides.webhookResolver && { resolver: overrides.webhookResolver }),
  });
  observeWebhookDeliveries(webhooks.worker, metrics);

  const services: ControlPlaneServices = {
    tenancy: container.resolve<TenancyService>(TOKENS.tenancy),
    market: container.resolve<MarketService>(TOKENS.market),
    marketSummary: container.resolve<MarketSummaryService>(TOKENS.marketSummary),
    billing: container.resolve<BillingService>(TOKENS.billing),
    rentals: container.resolve<RentalService>(TOKENS.rentals),
    accountControl: container.resolve<AccountControl>(TOKENS.accountControl),
    sweep: container.resolve<SweepService>(TOKENS.sweep),
    payments: container.resolve<PaymentsService>(TOKENS.paymentsService),
    signIn: container.resolve<SignInService>(TOKENS.signIn),
    people: container.resolve<PeopleService>(TOKENS.people),
    catalog: container.resolve<CatalogService>(TOKENS.catalog),
    volumes: container.resolve<VolumeService>(TOKENS.volumes),
    metering: container.resolve<MeteringService>(TOKENS.metering),
    reservations: container.resolve<ReservationService>(TOKENS.reservations),
    webhooks: webhooks.service,
    webhookDeliveries: webhooks.worker,
    spotClaims: container.resolve<SpotClaimService>(TOKENS.spotClaims),
    priceHistory: container.resolve<PriceHistory>(TOKENS.priceHistory),
  };
  const processor = container.resolve<Payments>(TOKENS.payments);
  try {
    await requireOpenableSecrets(services.catalog, secretBox.source);
  } catch (error) {
    await webhooks.close();
    await storage.close();
    throw error;
  }

  // The billing sweep, every minute; across processes only one runs at a time (storage.exclusive).
  const sweepJob =
    config.billing?.sweep === false
      ? null
      : new Cron('30 * * * * *', { protect: true, unref: true, catch: (error) => logger.error({ err: error }, 'billing sweep failed') }, async () => {
          const report = await services.sweep.run();
          if (report.ran) logger.info({ sweep: report }, 'billing sweep');
        });

  // Keeps every provider's snapshot warm; `protect` skips a tick while the last one still runs.
  const refreshJob =
    config.market?.backgroundRefresh === false
      ? null
      : new Cron('0 * * * * *', { protect: true, unref: true, catch: (error) => logger.error({ err: error }, 'market refresh failed') }, () =>
          asBackground(() => services.market.refreshDue()),
        );

  const routes: RouteDef[] = [];
  let openApi: object = {};
  routes.push(...metaRoutes(API_VERSION, () => openApi), ...monitoringRoutes(readinessProbe(storage, services.market), metrics, config.metrics?.token ?? null), ...tenancyRoutes(services.tenancy), ...marketRoutes(services.market, services.marketSummary, services.rentals),
    ...billingRoutes(services.billing, services.accountControl, services.payments),
    ...(processor instanceof ManualPayments ? manualCheckoutRoutes(processor, services.payments) : []),
    ...(processor.name === 'stripe' ? stripeWebhookRoutes(services.payments) : []),
    ...operatorRoutes(services.billing, services.accountControl, services.sweep),
    ...instanceRoutes(services.rentals, templateNode(services.catalog, services.market)),
    ...catalogRoutes(services.catalog),
    ...volumeRoutes(services.volumes),
    ...marketHistoryRoutes(services.priceHistory),
    ...providerRoutes(built.providers, sshUserOf),
    // only with the sandbox on: elsewhere the paths do not exist (404)
    ...(sandbox ? sandboxRoutes(new SandboxChaos({ storage, sandbox })) : []),
    ...reservationRoutes(services.reservations),
    ...webhookRoutes(services.webhooks),
    ...spotClaimRoutes(services.spotClaims),
    ...meteringRoutes(services.metering),
    ...authRoutes(services.signIn),
    ...identityRoutes(services.people),
    ...(signInAdapters.builtin
      ? authorizeRoutes({
          identity: signInAdapters.builtin,
          signIn: (email, password, client) => services.signIn.checkPassword(email, password, client),
          completeNewPassword: (email, session, password) => services.signIn.setNewPassword(email, session, password),
        })
      : []),
  );
  openApi = buildOpenApi(routes);

  const rateLimits = { ...config.rateLimits, ...(shared && { store: shared.rateLimitStore }) };
  // one set of budgets for the REST routes and POST /mcp: a tool call spends what a request does
  const limiters = rateLimiters(rateLimits);
  const router = express.Router();
  router.all(MCP_PATH, mcpEndpoint({ routes, openApi, tenancy: services.tenancy, limiters, logger }));
  router.use(buildRouter(routes, { tenancy: services.tenancy, operatorKeys: config.operatorKeys, rateLimits, limiters }));
  router.use(errorHandler(logger));

  return {
    services,
    router,
    routes,
    openApi,
    storage,
    clock,
    logger,
    container,
    metrics,
    async close() {
      refreshJob?.stop();
      sweepJob?.stop();
      await webhooks.close();
      await shared?.close();
      await storage.close();
      container.clearInstances();
    },
  };
}
