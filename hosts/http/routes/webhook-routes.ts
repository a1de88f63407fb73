import { z } from 'zod';
import type { ActsOn } from '../../../core/tenancy/acts-on.ts';
import type { WebhookService } from '../../../core/webhooks/webhook-service.ts';
import { defineRoute, type RouteDef } from '../route.ts';
import { ErrorOut } from '../schemas/common.ts';
import {
  DeliveriesQuery,
  WebhookDeliveryOut,
  WebhookEndpointCreate,
  WebhookEndpointCreated,
  WebhookEndpointIdParams,
  WebhookEndpointOut,
  webhookDeliveryOut,
  webhookEndpointOut,
} from '../schemas/webhooks.ts';

const tags = ['webhooks'];
const read = { kind: 'bearer', scope: 'read' } as const;
const manage = { kind: 'bearer', scope: 'manage' } as const;

const MADE_BY_ANOTHER = {
  status: 403,
  description: 'The token lacks the `manage` scope, or the endpoint was registered by another credential and this one is not root (MADE_BY_ANOTHER)',
  schema: ErrorOut,
};

/**
 * Outbound webhooks: manage to register, delete, test and take over endpoints, read to list them and their deliveries.
 * An endpoint hears the whole tenant, so a member's session and every token under it register or take over none, and
 * one delivers only while its registrant could still register it; a credential that is not root deletes, tests and
 * takes over only the endpoints its own subtree registered (docs/decisions.md, "One tree of authority"): the tenant's
 * alerts reach the owner's endpoint, and nobody below must silence it.
 */
export function webhookRoutes(webhooks: WebhookService, actsOn: ActsOn): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/webhook-endpoints',
      operationId: 'createWebhookEndpoint',
      summary: 'Register an endpoint for signed event deliveries; its signing secret is answered this once',
      tags,
      // an endpoint hears every event of the tenant, people's addresses and payments among them: not a member's to open
      access: { ...manage, tenantManage: true },
      body: WebhookEndpointCreate,
      responses: [
        { status: 201, description: 'Registered', schema: WebhookEndpointCreated },
        { status: 409, description: 'The tenant holds the most endpoints the operator allows (WEBHOOK_MAX_ENDPOINTS_PER_TENANT, default 20), or the server has no SECRETS_KEY to keep signing secrets under', schema: ErrorOut },
      ],
      async handle({ caller, body }) {
        const { endpoint, secret } = await webhooks.create(caller!.tenantId, { url: body.url, events: body.events ?? null, description: body.description ?? null }, caller!.id);
        return { status: 201, body: { ...webhookEndpointOut(endpoint), secret } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/webhook-endpoints',
      operationId: 'listWebhookEndpoints',
      summary: "The tenant's webhook endpoints, oldest first (secrets are never answered again)",
      tags,
      access: read,
      responses: [{ status: 200, description: 'Endpoints', schema: z.array(WebhookEndpointOut) }],
      async handle({ caller }) {
        return { status: 200, body: (await webhooks.list(caller!.tenantId)).map(webhookEndpointOut) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/webhook-endpoints/{endpoint_id}',
      operationId: 'getWebhookEndpoint',
      summary: 'One webhook endpoint, with whether it is failing or disabled',
      tags,
      access: read,
      params: WebhookEndpointIdParams,
      responses: [{ status: 200, description: 'The endpoint', schema: WebhookEndpointOut }],
      async handle({ caller, params }) {
        return { status: 200, body: webhookEndpointOut(await webhooks.get(caller!.tenantId, params.endpoint_id)) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/webhook-endpoints/{endpoint_id}',
      operationId: 'deleteWebhookEndpoint',
      summary: 'Delete a webhook endpoint: nothing more is sent to it, attempts still to make are abandoned',
      tags,
      access: manage,
      params: WebhookEndpointIdParams,
      responses: [{ status: 204, description: 'Deleted' }, MADE_BY_ANOTHER],
      async handle({ caller, params }) {
        await actsOn.require(caller!, 'webhook endpoint', params.endpoint_id);
        await webhooks.delete(caller!.tenantId, params.endpoint_id);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/webhook-endpoints/{endpoint_id}/test',
      operationId: 'testWebhookEndpoint',
      summary: 'Send a webhook.test event to this endpoint alone (the delivery worker posts it within seconds)',
      tags,
      access: manage,
      params: WebhookEndpointIdParams,
      bodyOptional: true,
      body: z.strictObject({}).meta({ examples: [{}] }),
      responses: [
        { status: 202, description: 'Scheduled: follow it in the deliveries', schema: WebhookDeliveryOut },
        MADE_BY_ANOTHER,
        { status: 409, description: 'The endpoint is disabled', schema: ErrorOut },
      ],
      async handle({ caller, params }) {
        await actsOn.require(caller!, 'webhook endpoint', params.endpoint_id);
        return { status: 202, body: webhookDeliveryOut(await webhooks.test(caller!.tenantId, params.endpoint_id)) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/webhook-endpoints/{endpoint_id}/enable',
      operationId: 'enableWebhookEndpoint',
      summary: 'Take an endpoint over: the caller becomes its registrant and, if it was disabled (its registrant ended, became a member\'s, or it failed a day), it delivers again from now on',
      tags,
      // the caller's authority is what the endpoint will deliver under: the same as registering one
      access: { ...manage, tenantManage: true },
      params: WebhookEndpointIdParams,
      bodyOptional: true,
      body: z.strictObject({}).meta({ examples: [{}] }),
      responses: [{ status: 200, description: 'The endpoint, active, with the caller as `made_by_token_id`', schema: WebhookEndpointOut }, MADE_BY_ANOTHER],
      async handle({ caller, params }) {
        await actsOn.require(caller!, 'webhook endpoint', params.endpoint_id);
        return { status: 200, body: webhookEndpointOut(await webhooks.takeOver(caller!.tenantId, params.endpoint_id, caller!.id)) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/webhook-endpoints/{endpoint_id}/deliveries',
      operationId: 'listWebhookDeliveries',
      summary: "The endpoint's delivery attempts, made and scheduled, newest first",
      tags,
      access: read,
      params: WebhookEndpointIdParams,
      query: DeliveriesQuery,
      responses: [{ status: 200, description: 'Attempts', schema: z.array(WebhookDeliveryOut) }],
      async handle({ caller, params, query }) {
        return { status: 200, body: (await webhooks.deliveries(caller!.tenantId, params.endpoint_id, query.limit)).map(webhookDeliveryOut) };
      },
    }),
  ];
}
