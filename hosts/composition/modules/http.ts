import express, { type Router } from 'express';
import { ActsOn } from '../../../core/tenancy/acts-on.ts';
import type { Logger } from 'pino';
import { sshUserOf } from '../../../adapters/providers/registry.ts';
import { ManualPayments } from '../../../adapters/payments/manual/adapter.ts';
import type { PrometheusMetrics } from '../../../adapters/metrics/prometheus-metrics.ts';
import type { MikroStorage } from '../../../adapters/storage/mikro-storage.ts';
import type { Payments } from '../../../core/ports/payments.ts';
import { errorHandler } from '../../http/error-handler.ts';
import { API_VERSION, buildOpenApi } from '../../http/openapi.ts';
import { rateLimiters } from '../../http/rate-limit.ts';
import type { RouteDef } from '../../http/route.ts';
import { buildRouter } from '../../http/router.ts';
import { authRoutes } from '../../http/routes/auth-routes.ts';
import { authorizeRoutes } from '../../http/routes/authorize-routes.ts';
import { billingRoutes } from '../../http/routes/billing-routes.ts';
import { budgetRoutes } from '../../http/routes/budget-routes.ts';
import { catalogRoutes } from '../../http/routes/catalog-routes.ts';
import { identityRoutes } from '../../http/routes/identity-routes.ts';
import { invitationRoutes } from '../../http/routes/invitation-routes.ts';
import { instanceRoutes } from '../../http/routes/instance-routes.ts';
import { marketHistoryRoutes } from '../../http/routes/market-history-routes.ts';
import { marketRoutes } from '../../http/routes/market-routes.ts';
import { metaRoutes } from '../../http/routes/meta-routes.ts';
import { meteringRoutes } from '../../http/routes/metering-routes.ts';
import { monitoringRoutes } from '../../http/routes/monitoring-routes.ts';
import { operatorRoutes } from '../../http/routes/operator-routes.ts';
import { manualCheckoutRoutes, stripeWebhookRoutes } from '../../http/routes/payment-routes.ts';
import { providerRoutes } from '../../http/routes/provider-routes.ts';
import { reservationRoutes } from '../../http/routes/reservation-routes.ts';
import { sandboxRoutes } from '../../http/routes/sandbox-routes.ts';
import { spotClaimRoutes } from '../../http/routes/spot-claim-routes.ts';
import { tenancyRoutes } from '../../http/routes/tenancy-routes.ts';
import { volumeRoutes } from '../../http/routes/volume-routes.ts';
import { webhookRoutes } from '../../http/routes/webhook-routes.ts';
import { MCP_PATH, mcpEndpoint } from '../../mcp/http-endpoint.ts';
import type { SignInAdapters } from '../auth.ts';
import type { ControlPlaneConfig } from '../config.ts';
import type { ControlPlaneServices } from '../services.ts';
import { readinessProbe } from '../readiness.ts';
import type { SharedState } from '../redis.ts';
import { SandboxChaos } from '../sandbox-chaos.ts';
import type { ProviderWiring } from './providers.ts';

export interface HttpSurface {
  routes: RouteDef[];
  openApi: object;
  /** REST and POST /mcp behind one set of rate limits: a tool call spends what a request does. */
  router: Router;
}

/**
 * The one route table behind REST, OpenAPI, the MCP tools and the typed client, and the router that serves it.
 * Routes that exist only with a part: the embedded checkout page with the embedded processor, Stripe's webhook
 * with Stripe, the hosted sign-in page with the built-in identity provider, the chaos routes with the sandbox.
 */
export function buildHttp(
  services: ControlPlaneServices,
  parts: {
    config: ControlPlaneConfig;
    storage: MikroStorage;
    metrics: PrometheusMetrics;
    logger: Logger;
    processor: Payments;
    clouds: ProviderWiring;
    signIn: SignInAdapters;
    shared: SharedState | null;
  },
): HttpSurface {
  const { config, processor, signIn } = parts;
  let openApi: object = {};
  const actsOn = new ActsOn(parts.storage);
  const routes: RouteDef[] = [
    ...metaRoutes(API_VERSION, () => openApi),
    ...monitoringRoutes(readinessProbe(parts.storage, services.market, parts.shared), parts.metrics, config.metrics?.token ?? null),
    ...tenancyRoutes(services.tenancy),
    ...marketRoutes(services.market, services.marketSummary, services.rentals),
    ...billingRoutes(services.billing, services.accountControl, services.payments),
    ...budgetRoutes(services.budgets),
    ...(processor instanceof ManualPayments ? manualCheckoutRoutes(processor, services.payments) : []),
    ...(processor.name === 'stripe' ? stripeWebhookRoutes(services.payments) : []),
    ...operatorRoutes(services.billing, services.accountControl, services.sweep),
    ...instanceRoutes(services.rentals, actsOn),
    ...catalogRoutes(services.catalog, actsOn),
    ...volumeRoutes(services.volumes, actsOn),
    ...marketHistoryRoutes(services.priceHistory),
    ...providerRoutes(parts.clouds.configured, sshUserOf),
    // only with the sandbox on: elsewhere the paths do not exist (404)
    ...(parts.clouds.sandbox ? sandboxRoutes(new SandboxChaos({ storage: parts.storage, sandbox: parts.clouds.sandbox })) : []),
    ...reservationRoutes(services.reservations, actsOn),
    ...webhookRoutes(services.webhooks, actsOn),
    ...spotClaimRoutes(services.spotClaims, actsOn),
    ...meteringRoutes(services.metering),
    ...authRoutes(services.signIn),
    ...identityRoutes(services.people),
    ...invitationRoutes(services.invitations),
    ...(signIn.builtin
      ? authorizeRoutes({
          identity: signIn.builtin,
          signIn: (email, password, client) => services.signIn.checkPassword(email, password, client),
          completeNewPassword: (email, session, password) => services.signIn.setNewPassword(email, session, password),
        })
      : []),
  ];
  openApi = buildOpenApi(routes);

  const rateLimits = { ...config.rateLimits, ...(parts.shared && { store: parts.shared.rateLimitStore }) };
  const limiters = rateLimiters(rateLimits);
  const router = express.Router();
  router.all(MCP_PATH, mcpEndpoint({ routes, openApi, tenancy: services.tenancy, limiters, logger: parts.logger }));
  router.use(buildRouter(routes, { tenancy: services.tenancy, operatorKeys: config.operatorKeys, rateLimits, limiters }));
  router.use(errorHandler(parts.logger));
  return { routes, openApi, router };
}
