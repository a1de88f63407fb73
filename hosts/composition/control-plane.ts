import 'reflect-metadata';
import express, { type Router } from 'express';
import { pino, type Logger } from 'pino';
import { container as rootContainer, instanceCachingFactory, type DependencyContainer } from 'tsyringe';
import { SystemClock } from '../../adapters/clock/system-clock.ts';
import { NodeSecrets, RandomIds } from '../../adapters/crypto/node-secrets.ts';
import { MikroStorage } from '../../adapters/storage/mikro-storage.ts';
import type { Clock } from '../../core/ports/clock.ts';
import type { Ids, Secrets } from '../../core/ports/ids.ts';
import type { Storage } from '../../core/ports/storage.ts';
import { TenancyService } from '../../core/tenancy/tenancy-service.ts';
import { errorHandler } from '../http/error-handler.ts';
import { API_VERSION, buildOpenApi } from '../http/openapi.ts';
import type { RouteDef } from '../http/route.ts';
import { buildRouter } from '../http/router.ts';
import { metaRoutes } from '../http/routes/meta-routes.ts';
import { tenancyRoutes } from '../http/routes/tenancy-routes.ts';
import type { ControlPlaneConfig } from './config.ts';

/** Injection tokens of the container. */
export const TOKENS = {
  config: 'Config',
  logger: 'Logger',
  clock: 'Clock',
  ids: 'Ids',
  secrets: 'Secrets',
  storage: 'Storage',
  tenancy: 'TenancyService',
} as const;

export interface ControlPlaneServices {
  tenancy: TenancyService;
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
  close(): Promise<void>;
}

/** Seams for embedding programs and tests: swap the clock, the logger, or an adapter. */
export interface ControlPlaneOverrides {
  clock?: Clock;
  logger?: Logger;
}

/** The composition root: picks adapters from configuration and wires the core to them. */
export async function createControlPlane(config: ControlPlaneConfig, overrides: ControlPlaneOverrides = {}): Promise<ControlPlane> {
  const logger = overrides.logger ?? pino({ level: config.logLevel, base: { service: 'gpu-control-plane' } });
  const storage = await MikroStorage.open(config.storage);

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
          storage: c.resolve<Storage>(TOKENS.storage),
          clock: c.resolve<Clock>(TOKENS.clock),
          ids: c.resolve<Ids>(TOKENS.ids),
          secrets: c.resolve<Secrets>(TOKENS.secrets),
        }),
    ),
  });

  const services: ControlPlaneServices = { tenancy: container.resolve<TenancyService>(TOKENS.tenancy) };

  const routes: RouteDef[] = [];
  let openApi: object = {};
  routes.push(...metaRoutes(API_VERSION, () => openApi), ...tenancyRoutes(services.tenancy));
  openApi = buildOpenApi(routes);

  const router = express.Router();
  router.use(express.json({ limit: '100kb' }));
  router.use(buildRouter(routes, { tenancy: services.tenancy, operatorKeys: config.operatorKeys, rateLimits: config.rateLimits }));
  router.use(errorHandler(logger));

  return {
    services,
    router,
    routes,
    openApi,
    storage,
    clock: container.resolve<Clock>(TOKENS.clock),
    logger,
    container,
    async close() {
      await storage.close();
      container.clearInstances();
    },
  };
}
