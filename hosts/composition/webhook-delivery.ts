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
 * Webhook endpoints and the delivery worker (DESIGN.md §15). Unless `delivery` is false, the worker runs in this
 * process every `pollMs` (the server and the sweep daemon alike: SKIP LOCKED gives each attempt to one of them);
 * a round that is still running when the next is due makes the next wait.
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
  const worker = new DeliveryWorker(shared);

  let stopped = config?.delivery === false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  const pollMs = config?.pollMs ?? 1_000;
  const round = () => {
    timer = null;
    running = worker
      .deliverDue()
      .then(
        (made) => void (made > 0 && deps.logger.debug({ webhookAttempts: made }, 'webhook deliveries')),
        (error: unknown) => deps.logger.error({ err: error }, 'webhook delivery round failed'),
      )
      .finally(() => {
        running = null;
        if (!stopped) schedule();
      });
  };
  const schedule = () => {
    timer = setTimeout(round, pollMs);
    timer.unref();
  };
  if (!stopped) schedule();

  return {
    service,
    worker,
    async close() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
      await transport.close();
    },
  };
}
