import { EVENT_ID_PREFIX, TEST_EVENT_TYPE, type EventType } from '../events/event.ts';
import { DomainError, invalidInput, notFound } from '../errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { Ids } from '../ports/ids.ts';
import type { SecretBox } from '../ports/secret-box.ts';
import type { Storage } from '../ports/storage.ts';
import type { WebhookSigner, WebhookTransport } from '../ports/webhook-transport.ts';
import { DELIVERY_ID_PREFIX, ENDPOINT_ID_PREFIX, type WebhookDelivery, type WebhookEndpoint } from './endpoint.ts';

export interface NewEndpoint {
  url: string;
  events: EventType[] | null;
  description: string | null;
}

/** A new endpoint with its signing secret: the only time the secret is answered. */
export interface CreatedEndpoint {
  endpoint: WebhookEndpoint;
  secret: string;
}

/** Endpoints a tenant may hold unless the operator says otherwise (WEBHOOK_MAX_ENDPOINTS_PER_TENANT). */
export const DEFAULT_MAX_ENDPOINTS_PER_TENANT = 20;

/**
 * A tenant's webhook endpoints (docs/decisions.md, "Webhooks"): registered, listed, deleted, tested, their deliveries shown. A
 * tenant holds at most `maxEndpointsPerTenant` of them (deleted ones aside, disabled ones counted): each is work
 * for the delivery workers every event, so the operator bounds it.
 */
export class WebhookService {
  private readonly storage: Storage;
  private readonly clock: Clock;
  private readonly ids: Ids;
  private readonly box: SecretBox | null;
  private readonly signer: WebhookSigner;
  private readonly transport: WebhookTransport;
  private readonly maxEndpoints: number;

  constructor(deps: { storage: Storage; clock: Clock; ids: Ids; secretBox: SecretBox | null; signer: WebhookSigner; transport: WebhookTransport; maxEndpointsPerTenant?: number }) {
    this.storage = deps.storage;
    this.clock = deps.clock;
    this.ids = deps.ids;
    this.box = deps.secretBox;
    this.signer = deps.signer;
    this.transport = deps.transport;
    this.maxEndpoints = deps.maxEndpointsPerTenant ?? DEFAULT_MAX_ENDPOINTS_PER_TENANT;
  }

  /** Registers an endpoint as the token `tokenId` (only its subtree, or root, deletes or tests it: acts-on.ts). */
  async create(tenantId: string, request: NewEndpoint, tokenId: string): Promise<CreatedEndpoint> {
    // the secret signs every delivery, so it is kept (sealed), not digested: no key, no endpoints
    if (!this.box) throw new DomainError('CONFLICT', 'webhook signing secrets are kept encrypted under SECRETS_KEY, and none is set; the operator sets SECRETS_KEY first');
    const refusal = await this.transport.refusal(request.url);
    if (refusal) throw invalidInput(['body', 'url'], refusal);
    const id = this.ids.newId(ENDPOINT_ID_PREFIX);
    const secret = this.signer.newSecret();
    const endpoint: WebhookEndpoint = {
      id,
      tenantId,
      url: request.url,
      events: request.events,
      description: request.description,
      secretSealed: this.box.seal(secret, id),
      tokenId,
      createdAt: this.clock.now(),
      failingSince: null,
      disabledAt: null,
      disabledReason: null,
    };
    await this.storage.transaction(async (uow) => {
      // counted under the tenant's registration lock: parallel creates cannot each see room for one more
      const held = await uow.webhooks.countEndpointsForRegistration(tenantId);
      if (held >= this.maxEndpoints) {
        throw new DomainError(
          'CONFLICT',
          `this tenant already holds ${held} webhook endpoints, the most the operator allows (WEBHOOK_MAX_ENDPOINTS_PER_TENANT=${this.maxEndpoints}); delete one first (disabled endpoints count until deleted)`,
        );
      }
      await uow.webhooks.addEndpoint(endpoint);
    });
    return { endpoint, secret };
  }

  list(tenantId: string): Promise<WebhookEndpoint[]> {
    return this.storage.read((uow) => uow.webhooks.listEndpoints(tenantId));
  }

  async get(tenantId: string, endpointId: string): Promise<WebhookEndpoint> {
    const endpoint = await this.storage.read((uow) => uow.webhooks.getEndpoint(tenantId, endpointId));
    if (!endpoint) throw notFound(`webhook endpoint ${endpointId}`);
    return endpoint;
  }

  async delete(tenantId: string, endpointId: string): Promise<void> {
    const deleted = await this.storage.transaction((uow) => uow.webhooks.deleteEndpoint(tenantId, endpointId, this.clock.now()));
    if (!deleted) throw notFound(`webhook endpoint ${endpointId}`);
  }

  /**
   * Makes the token `tokenId` the endpoint's registrant and enables it if it was disabled (docs/webhooks.md): an endpoint
   * disabled because its registrant ended or became a member's, or because it failed for a day, delivers again from now
   * on, under the authority of whoever took it over. Events of the time it was disabled are not sent.
   */
  async takeOver(tenantId: string, endpointId: string, tokenId: string): Promise<WebhookEndpoint> {
    const endpoint = await this.storage.transaction((uow) => uow.webhooks.takeOver(tenantId, endpointId, tokenId));
    if (!endpoint) throw notFound(`webhook endpoint ${endpointId}`);
    return endpoint;
  }

  /** Schedules a `webhook.test` event for this endpoint alone, due now: the delivery worker sends it. */
  async test(tenantId: string, endpointId: string): Promise<WebhookDelivery> {
    return this.storage.transaction(async (uow) => {
      const endpoint = await uow.webhooks.getEndpoint(tenantId, endpointId);
      if (!endpoint) throw notFound(`webhook endpoint ${endpointId}`);
      if (endpoint.disabledAt) throw new DomainError('CONFLICT', `webhook endpoint ${endpointId} is disabled (${endpoint.disabledReason}); enable it again (POST /v1/webhook-endpoints/${endpointId}/enable)`);
      const now = this.clock.now();
      const event = { id: this.ids.newId(EVENT_ID_PREFIX), tenantId, type: TEST_EVENT_TYPE, data: { endpoint_id: endpointId }, createdAt: now };
      const deliveryId = this.ids.newId(DELIVERY_ID_PREFIX);
      await uow.webhooks.addEventFor(event, endpointId, deliveryId);
      return { id: deliveryId, endpointId, eventId: event.id, type: event.type, attempt: 1, status: 'pending', responseStatus: null, error: null, nextAttemptAt: now, createdAt: now };
    });
  }

  async deliveries(tenantId: string, endpointId: string, limit: number): Promise<WebhookDelivery[]> {
    return this.storage.read(async (uow) => {
      if (!(await uow.webhooks.getEndpoint(tenantId, endpointId))) throw notFound(`webhook endpoint ${endpointId}`);
      return uow.webhooks.deliveries(endpointId, limit);
    });
  }
}
