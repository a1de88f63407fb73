import type { Logger } from 'pino';
import type { DependencyContainer } from 'tsyringe';
import { NodeSecrets, RandomIds } from '../../../adapters/crypto/node-secrets.ts';
import type { PrometheusMetrics } from '../../../adapters/metrics/prometheus-metrics.ts';
import type { MikroStorage } from '../../../adapters/storage/mikro-storage.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { ControlPlaneConfig } from '../config.ts';
import { CLOCK, CONFIG, IDS, LOGGER, METRICS, SECRETS, STORAGE } from './ports.ts';

/** The storage, the clock, ids and secrets, the logger and the metrics: what every area is built on. */
export function registerKernel(
  container: DependencyContainer,
  parts: { config: ControlPlaneConfig; logger: Logger; clock: Clock; storage: MikroStorage; metrics: PrometheusMetrics },
): void {
  container.register(CONFIG, { useValue: parts.config });
  container.register(LOGGER, { useValue: parts.logger });
  container.register(CLOCK, { useValue: parts.clock });
  container.register(IDS, { useValue: new RandomIds() });
  container.register(SECRETS, { useValue: new NodeSecrets() });
  container.register(STORAGE, { useValue: parts.storage });
  container.register(METRICS, { useValue: parts.metrics });
}
