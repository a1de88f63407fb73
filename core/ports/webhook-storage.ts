import type { StoredEvent } from '../events/event.ts';
import type { WebhookDelivery, WebhookEndpoint } from '../webhooks/endpoint.ts';

/** An attempt a worker took, with what it needs to make it. */
export interface ClaimedDelivery {
  delivery: WebhookDelivery;
  event: StoredEvent;
  endpoint: WebhookEndpoint;
  /** When the first attempt of this event at this endpoint was due: the retry window counts from here. */
  firstDueAt: Date;
  /**
   * Whether a node its registrant's standing rests on had ended at the claim (revoked, expired, past its idle
   * deadline; see lapseCandidates): the worker then judges the chain (core/webhooks/registrant.ts) before sending.
   */
  registrantEnded: boolean;
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
  /**
   * Not sent: the endpoint's registrant could no longer register it (core/webhooks/registrant.ts). The attempt is
   * recorded abandoned with `error`, the endpoint disabled with `disable`, and its failing_since is left as it was.
   */
  withheld: boolean;
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
  /**
   * Disables it, if neither deleted nor disabled already, with `reason`, abandoning its attempts still to make (those
   * first, the order a worker recording its attempts locks them in); false when it was not.
   */
  disable(endpointId: string, at: Date, reason: string): Promise<boolean>;
  /**
   * Gives it to the token `tokenId` (its registrant from now on) and, if it was disabled, enables it: its failures
   * forgotten and any attempt still waiting from before abandoned (events of the time it was disabled are not sent).
   * The endpoint answered as it now is; null when the tenant has none (not deleted) of that id.
   */
  takeOver(tenantId: string, endpointId: string, tokenId: string): Promise<WebhookEndpoint | null>;
  /**
   * Endpoints of any tenant, neither deleted nor disabled, whose registrant's chain holds a node that ended by `now`
   * (revoked, expired, past its idle deadline), the registrant's own row left out when it is a console session (it
   * registers for its person: core/webhooks/registrant.ts); at most `limit`, in id order. A first look: the core
   * judges each. Those after `afterId` when given, so a pass moves on past ones the core keeps.
   */
  lapseCandidates(now: Date, afterId: string | null, limit: number): Promise<{ tenantId: string; endpointId: string }[]>;
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
