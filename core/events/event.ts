/** What a tenant's webhook endpoints can hear about. */
export const EVENT_TYPES = [
  'instance.running',
  'instance.terminated',
  'instance.failed',
  'instance.preempted',
  'instance.recovered',
  'instance.recovery_failed',
  'balance.low',
  'breaker.tripped',
  'deposit.confirmed',
  'deposit.rejected',
  'auto_recharge.failed',
  'reservation.started',
  'reservation.failed',
  'identity.linked',
  'identity.unlinked',
  'identity.updated',
  'budget.threshold_reached',
  'token.idle_timeout',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** Sent by POST /v1/webhook-endpoints/{id}/test to that endpoint alone; no endpoint subscribes to it. */
export const TEST_EVENT_TYPE = 'webhook.test';

export const EVENT_ID_PREFIX = 'evt';

/** An event to record, in the transaction of the change it tells. `data` is the JSON the receiver gets. */
export interface NewEvent {
  tenantId: string;
  type: EventType;
  data: Record<string, unknown>;
  at: Date;
}

/** A recorded event: the body of every delivery of it is `{id, type, created_at, data}`. */
export interface StoredEvent {
  id: string;
  tenantId: string;
  type: string;
  data: Record<string, unknown>;
  createdAt: Date;
}

export const eventBody = (event: StoredEvent): string =>
  JSON.stringify({ id: event.id, type: event.type, created_at: event.createdAt.toISOString(), data: event.data });
