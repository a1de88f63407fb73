import type { StoredEvent } from '../events/event.ts';
import type { WebhookDelivery, WebhookEndpoint } from '../webhooks/endpoint.ts';

/** An attempt a worker took, with what it needs to make it. */
export interface ClaimedDelivery {
  delivery: WebhookDelivery;
  event: StoredEvent;
  endpoint: WebhookEndpoint;
  /** When the first attempt of this event at this endpoint was due: the retry window counts from here. */
  firstDueAt: Date;
}

/** How much of a worker's pool each tenant may still take. */
export interface TenantShare {
  /** Attempts one tenant may have in flight in the worker. */
  perTenant: number;
  /** Attempts the worker is sending now, by tenant id. */
  held: ReadonlyMap<string, number>;
}

/** How an attempt ended, recorded in one transaction with what follows from it. */
export interface AttemptResult {
  deliveryId: string;
  endpointId: string;
  at: Date;
  ok: boolean;
  responseStatus: number | null;
  error: string | null;
  /** The next attempt's row (failed attempts within the window). */
  retry: { id: string; at: Date } | null;
  /** The endpoint failed for the whole window: disabled with this reason, its attempts still to make abandoned. */
  disable: string | null;
}

/** Webhook endpoints and their deliveries; a tenant's reads see only its own. */
export interface WebhookStore {
  /**
   * The tenant's endpoints not deleted (disabled ones included), counted under a lock on the tenant's registrations
   * held until the transaction ends: another registration for the tenant waits, then counts this one's endpoint.
   */
  countEndpointsForRegistration(tenantId: string): Promise<number>;
  addEndpoint(endpoint: WebhookEndpoint): Promise<void>;
  /** Not deleted. */
  getEndpoint(tenantId: string, endpointId: string): Promise<WebhookEndpoint | null>;
  /** Not deleted, oldest first. */
  listEndpoints(tenantId: string): Promise<WebhookEndpoint[]>;
  /** Marks it deleted and abandons its attempts still to make; false when there was none to delete. */
  deleteEndpoint(tenantId: string, endpointId: string, at: Date): Promise<boolean>;
  /** Records an event for one endpoint alone (the test event) with its first attempt due at `at`. */
  addEventFor(event: StoredEvent, endpointId: string, deliveryId: string): Promise<void>;
  /** Newest first. */
  deliveries(endpointId: string, limit: number): Promise<WebhookDelivery[]>;
  /**
   * Takes up to `limit` attempts due at `now` (pending ones, and ones a worker claimed but did not finish
   * before its claim ran out) of endpoints neither deleted nor disabled, marking each 'sending' until
   * `claimUntil` in one statement; rows another transaction holds are skipped, so two workers never take one.
   * Tenants take turns (each one's oldest attempt first, then each one's second...), and a tenant gets no more
   * than its room: `share.perTenant` less what the worker is already sending for it (`share.held`).
   */
  claimDue(now: Date, claimUntil: Date, limit: number, share: TenantShare): Promise<ClaimedDelivery[]>;
  /**
   * Records how attempts ended (a worker's batch, endpoint by endpoint): successes in a few statements for all,
   * each failure with its retry scheduled and its endpoint's failing_since kept (or the endpoint disabled).
   */
  finish(results: readonly AttemptResult[]): Promise<void>;
}
