import type { Logger } from 'pino';
import { StandardWebhookSigner } from '../../adapters/webhooks/standard-signer.ts';
import { UndiciWebhookTransport, type Resolver } from '../../adapters/webhooks/undici-transport.ts';
import type { Clock } from '../../core/ports/clock.ts';
import type { Ids } from '../../core/ports/ids.ts';
import type { SecretBox } from '../../core/ports/secret-box.ts';
import type { Storage } from '../../core/ports/storage.ts';
import { DeliveryWorker } from '../../core/webhooks/delivery-worker.ts';
import { DEFAULT_MAX_ENDPOINTS_PER_TENANT, WebhookService } from '../../core/webhooks/webhook-service.ts';
import type { WebhooksConfig } from './config.ts';

export interface Webhooks {
  service: WebhookService;
  worker: DeliveryWorker;
  close(): Promise<void>;
}

/**
 * Webhook endpoints and the delivery worker. Unless `delivery` is false, the worker runs in this
 * process (the server and the sweep daemon alike: SKIP LOCKED gives each attempt to one of them): a round starts
 * every `pollMs` while its pool has room, beside rounds still waiting on slow endpoints, so an attempt that falls
 * due is taken within `pollMs` whatever other tenants' endpoints are doing (docs/decisions.md, Webhook fairness).
 */
export function createWebhooks(
  config: WebhooksConfig | undefined,
  deps: { storage: Storage; clock: Clock; ids: Ids; secretBox: SecretBox | null; logger: Logger; resolver?: Resolver },
): Webhooks {
  const transport = new UndiciWebhookTransport({
    allowHttpLocalhost: config?.allowHttp ?? false,
    ...(config?.timeoutMs !== undefined && { timeoutMs: config.timeoutMs }),
    ...(deps.resolver && { resolver: deps.resolver }),
  });
  const signer = new StandardWebhookSigner();
  const shared = { storage: deps.storage, clock: deps.clock, ids: deps.ids, secretBox: deps.secretBox, signer, transport };
  const service = new WebhookService({ ...shared, maxEndpointsPerTenant: config?.maxEndpointsPerTenant ?? DEFAULT_MAX_ENDPOINTS_PER_TENANT });
  const worker = new DeliveryWorker({
    ...shared,
    settings: {
      ...(config?.concurrency !== undefined && { concurrency: config.concurrency }),
      ...(config?.concurrencyPerTenant !== undefined && { perTenant: config.concurrencyPerTenant }),
    },
  });

  let stopped = config?.delivery === false;
  let timer: NodeJS.Timeout | null = null;
  const rounds = new Set<Promise<void>>();
  const pollMs = config?.pollMs ?? 1_000;
  const tick = () => {
    timer = null;
    if (stopped) return;
    if (worker.hasRoom()) {
      const round: Promise<void> = worker
        .deliverDue()
        .then(
          (made) => void (made > 0 && deps.logger.debug({ webhookAttempts: made }, 'webhook deliveries')),
          (error: unknown) => deps.logger.error({ err: error }, 'webhook delivery round failed'),
        )
        .finally(() => rounds.delete(round));
      rounds.add(round);
    }
    timer = setTimeout(tick, pollMs);
    timer.unref();
  };
  if (!stopped) {
    timer = setTimeout(tick, pollMs);
    timer.unref();
  }

  return {
    service,
    worker,
    async close() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await Promise.all(rounds);
      await transport.close();
    },
  };
}
