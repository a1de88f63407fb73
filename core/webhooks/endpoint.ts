import type { EventType } from '../events/event.ts';

export const ENDPOINT_ID_PREFIX = 'whe';
export const DELIVERY_ID_PREFIX = 'whd';

/** A tenant's webhook endpoint. Its signing secret is kept sealed and answered once, at creation. */
export interface WebhookEndpoint {
  id: string;
  tenantId: string;
  url: string;
  /** The event types it listens to; null: all of them. */
  events: EventType[] | null;
  description: string | null;
  /** The signing secret (whsec_…) sealed by the secret box, bound to the endpoint's id. */
  secretSealed: string;
  /** The token that saved it (core/tenancy/acts-on.ts); null: saved before migration 0040, so only root changes it. */
  tokenId: string | null;
  createdAt: Date;
  /** Since when every attempt has failed (null: the last one succeeded, or none failed yet). */
  failingSince: Date | null;
  /** Set once it failed for the whole retry window: no more deliveries are made to it. */
  disabledAt: Date | null;
  disabledReason: string | null;
}

/** 'pending' and 'sending' are still to be made; 'abandoned': its endpoint was deleted or disabled first. */
export type DeliveryStatus = 'pending' | 'sending' | 'succeeded' | 'failed' | 'abandoned';

/** One attempt at delivering one event to one endpoint, made or scheduled. */
export interface WebhookDelivery {
  id: string;
  endpointId: string;
  eventId: string;
  type: string;
  attempt: number;
  status: DeliveryStatus;
  responseStatus: number | null;
  /** Why a failed attempt failed: the status line, a timeout, a refused address. */
  error: string | null;
  /** When this attempt is (or was) due; after a failure, the next attempt's row carries the next time. */
  nextAttemptAt: Date | null;
  createdAt: Date;
}
