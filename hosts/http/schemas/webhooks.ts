import { z } from 'zod';
import { EVENT_TYPES } from '../../../core/events/event.ts';
import type { WebhookDelivery, WebhookEndpoint } from '../../../core/webhooks/endpoint.ts';
import { dateTimeOut, isoOrNull, madeByTokenIdOut, queryInt, resourceId } from './common.ts';

const EventTypeIn = z.enum(EVENT_TYPES);

export const WebhookEndpointCreate = z
  .strictObject({
    url: z.string().trim().min(1).max(2048).meta({
      pattern: '^https?://',
      examples: ['https://hooks.example.com/gpu'],
      description: 'Where events are POSTed: https:// to a public address (http:// for localhost, 127.0.0.1 or ::1 only when the server runs with WEBHOOKS_ALLOW_HTTP=true).',
    }),
    events: z.array(EventTypeIn).min(1).max(EVENT_TYPES.length).optional().meta({ description: 'The event types to send; leave it out for all of them.' }),
    description: z.string().trim().max(500).optional(),
  })
  .meta({ id: 'WebhookEndpointCreate', examples: [{ url: 'https://hooks.example.com/gpu', events: ['instance.running', 'instance.terminated', 'balance.low'], description: 'ops alerts' }] });

export const WebhookEndpointIdParams = z.object({ endpoint_id: resourceId('whe') });

export const WebhookEndpointOut = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.string()).nullable().meta({ description: 'The event types it gets; null: all.' }),
    description: z.string().nullable(),
    made_by_token_id: madeByTokenIdOut(),
    created_at: dateTimeOut(),
    status: z.enum(['active', 'disabled']).meta({
      description: '`disabled`: nothing is sent to it (attempts still to make were abandoned); `disabled_reason` says why, and POST …/enable takes it over.',
    }),
    failing_since: dateTimeOut().nullable().meta({ description: 'Since when every attempt failed; null while it answers.' }),
    disabled_at: dateTimeOut().nullable().meta({
      description:
        "When it was disabled: after 24 hours of failed deliveries, or once the credential that registered it could no longer register it (it or one above it revoked, expired or timed out idle, its person removed or made a member).",
    }),
    disabled_reason: z.string().nullable().meta({
      description: "Why, in words: e.g. 'the credential that registered it ended: token tok_… was revoked', 'the credential that registered it is now a member's, …', or the failures.",
    }),
  })
  .meta({ id: 'WebhookEndpointOut' });

export const WebhookEndpointCreated = WebhookEndpointOut.extend({
  secret: z.string().meta({ description: 'The signing secret (whsec_ + base64, the Standard Webhooks form), answered this once: keep it to verify signatures.' }),
}).meta({ id: 'WebhookEndpointCreated' });

export const WebhookDeliveryOut = z
  .object({
    id: z.string(),
    event_id: z.string().meta({ description: 'Also the webhook-id header: the same on every attempt of one event.' }),
    type: z.string(),
    attempt: z.int().min(1),
    status: z.enum(['pending', 'sending', 'succeeded', 'failed', 'abandoned']),
    response_status: z.int().nullable().meta({ description: "The receiver's HTTP status; null without an answer." }),
    error: z.string().nullable().meta({ description: 'Why the attempt failed: a status, a timeout, a refused address.' }),
    next_attempt_at: dateTimeOut().nullable().meta({ description: 'Pending: when it is due. Failed: when the next attempt is due (null: no more).' }),
    created_at: dateTimeOut(),
  })
  .meta({ id: 'WebhookDeliveryOut' });

export const DeliveriesQuery = z.object({ limit: queryInt(1, 1000, 'How many attempts, newest first (default 100).').default(100) });

export const webhookEndpointOut = (w: WebhookEndpoint): z.input<typeof WebhookEndpointOut> => ({
  id: w.id,
  url: w.url,
  events: w.events,
  description: w.description,
  made_by_token_id: w.tokenId,
  created_at: w.createdAt.toISOString(),
  status: w.disabledAt === null ? 'active' : 'disabled',
  failing_since: isoOrNull(w.failingSince),
  disabled_at: isoOrNull(w.disabledAt),
  disabled_reason: w.disabledReason,
});

export const webhookDeliveryOut = (d: WebhookDelivery): z.input<typeof WebhookDeliveryOut> => ({
  id: d.id,
  event_id: d.eventId,
  type: d.type,
  attempt: d.attempt,
  status: d.status,
  response_status: d.responseStatus,
  error: d.error,
  next_attempt_at: isoOrNull(d.nextAttemptAt),
  created_at: d.createdAt.toISOString(),
});
