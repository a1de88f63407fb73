import type { EntityManager } from '@mikro-orm/sql';
import type { EventType, StoredEvent } from '../../../core/events/event.ts';
import type { AttemptResult, ClaimedDelivery, TenantShare, WebhookStore } from '../../../core/ports/webhook-storage.ts';
import type { DeliveryStatus, WebhookDelivery, WebhookEndpoint } from '../../../core/webhooks/endpoint.ts';
import { date, dateOrNull, num, numOrNull, textArray, textOrNull, type Row } from './sql-rows.ts';

const ENDPOINT_COLUMNS = ['id', 'tenant_id', 'url', 'events', 'description', 'secret_sealed', 'created_at', 'failing_since', 'disabled_at', 'disabled_reason', 'token_id'] as const;
const ENDPOINT = ENDPOINT_COLUMNS.map((column) => `w.${column}`).join(', ');
const DELIVERY = `d.id, d.endpoint_id, d.event_id, e.type, d.attempt, d.status, d.response_status, d.error, d.next_attempt_at, d.created_at`;
/**
 * Whether a node of the chain the endpoint `w`'s standing rests on ended by the time bound to the one `?` (revoked,
 * expired, past its idle deadline): the registrant's ancestors, and itself unless it is a console session (which
 * registers for its person: core/webhooks/registrant.ts). A few index reads per endpoint; the core judges what it finds.
 */
const REGISTRANT_ENDED = `exists (select 1 from tokens r join tokens a on a.id = any(r.ancestor_ids || case when r.kind = 'session' then '{}'::text[] else array[r.id] end)
  where r.id = w.token_id and (a.revoked_at is not null or a.expires_at <= ? or a.idle_deadline_at <= ?))`;

const toEndpoint = (row: Row, prefix = ''): WebhookEndpoint => ({
  id: String(row[`${prefix}id`]),
  tenantId: String(row[`${prefix}tenant_id`]),
  url: String(row[`${prefix}url`]),
  events: Array.isArray(row[`${prefix}events`]) ? (row[`${prefix}events`] as unknown[]).map(String) as EventType[] : null,
  description: textOrNull(row[`${prefix}description`]),
  secretSealed: String(row[`${prefix}secret_sealed`]),
  createdAt: date(row[`${prefix}created_at`]),
  failingSince: dateOrNull(row[`${prefix}failing_since`]),
  disabledAt: dateOrNull(row[`${prefix}disabled_at`]),
  disabledReason: textOrNull(row[`${prefix}disabled_reason`]),
  tokenId: textOrNull(row[`${prefix}token_id`]),
});

const toDelivery = (row: Row): WebhookDelivery => ({
  id: String(row.id),
  endpointId: String(row.endpoint_id),
  eventId: String(row.event_id),
  type: String(row.type),
  attempt: num(row.attempt),
  status: row.status as DeliveryStatus,
  responseStatus: numOrNull(row.response_status),
  error: textOrNull(row.error),
  nextAttemptAt: dateOrNull(row.next_attempt_at),
  createdAt: date(row.created_at),
});

const dataOf = (value: unknown): Record<string, unknown> => (typeof value === 'string' ? JSON.parse(value) : value) as Record<string, unknown>;

export class MikroWebhookStore implements WebhookStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async countEndpointsForRegistration(tenantId: string): Promise<number> {
    // the tenant's row is the lock: no key update, so rows elsewhere that reference the tenant (key share) never wait on it
    await this.em.execute(`select id from tenants where id = ? for no key update`, [tenantId]);
    const [row] = await this.em.execute<Row[]>(`select count(*)::int as n from webhook_endpoints where tenant_id = ? and deleted_at is null`, [tenantId]);
    return num(row!.n);
  }

  async addEndpoint(w: WebhookEndpoint): Promise<void> {
    await this.em.execute(
      `insert into webhook_endpoints (${ENDPOINT_COLUMNS.join(', ')}) values (?, ?, ?, ?::text[], ?, ?, ?, ?, ?, ?, ?)`,
      [w.id, w.tenantId, w.url, w.events === null ? null : textArray(w.events), w.description, w.secretSealed, w.createdAt, w.failingSince, w.disabledAt, w.disabledReason, w.tokenId],
    );
  }

  async getEndpoint(tenantId: string, endpointId: string): Promise<WebhookEndpoint | null> {
    const [row] = await this.em.execute<Row[]>(`select ${ENDPOINT} from webhook_endpoints w where w.tenant_id = ? and w.id = ? and w.deleted_at is null`, [tenantId, endpointId]);
    return row ? toEndpoint(row) : null;
  }

  async listEndpoints(tenantId: string): Promise<WebhookEndpoint[]> {
    const rows = await this.em.execute<Row[]>(`select ${ENDPOINT} from webhook_endpoints w where w.tenant_id = ? and w.deleted_at is null order by w.created_at, w.id`, [tenantId]);
    return rows.map((row) => toEndpoint(row));
  }

  async deleteEndpoint(tenantId: string, endpointId: string, at: Date): Promise<boolean> {
    const rows = await this.em.execute<Row[]>(
      `update webhook_endpoints set deleted_at = ? where tenant_id = ? and id = ? and deleted_at is null returning id`,
      [at, tenantId, endpointId],
    );
    if (rows.length === 0) return false;
    await this.abandon(endpointId);
    return true;
  }

  async disable(endpointId: string, at: Date, reason: string): Promise<boolean> {
    await this.abandon(endpointId);
    const rows = await this.em.execute<Row[]>(
      `update webhook_endpoints set disabled_at = ?, disabled_reason = ? where id = ? and deleted_at is null and disabled_at is null returning id`,
      [at, reason, endpointId],
    );
    return rows.length > 0;
  }

  async takeOver(tenantId: string, endpointId: string, tokenId: string): Promise<WebhookEndpoint | null> {
    const [before] = await this.em.execute<Row[]>(
      `select disabled_at from webhook_endpoints where tenant_id = ? and id = ? and deleted_at is null for update`,
      [tenantId, endpointId],
    );
    if (!before) return null;
    if (before.disabled_at !== null) {
      // an event recorded while its disabling committed may have left an attempt: it belongs to the time it was disabled
      await this.abandon(endpointId);
      await this.em.execute(`update webhook_endpoints set disabled_at = null, disabled_reason = null, failing_since = null where id = ?`, [endpointId]);
    }
    const [row] = await this.em.execute<Row[]>(`update webhook_endpoints w set token_id = ? where w.id = ? returning ${ENDPOINT}`, [tokenId, endpointId]);
    return toEndpoint(row!);
  }

  async lapseCandidates(now: Date, afterId: string | null, limit: number): Promise<{ tenantId: string; endpointId: string }[]> {
    const rows = await this.em.execute<Row[]>(
      `select w.id, w.tenant_id from webhook_endpoints w
        where w.deleted_at is null and w.disabled_at is null and w.token_id is not null and (?::text is null or w.id > ?) and ${REGISTRANT_ENDED}
        order by w.id limit ?`,
      [afterId, afterId, now, now, limit],
    );
    return rows.map((row) => ({ tenantId: String(row.tenant_id), endpointId: String(row.id) }));
  }

  async addEventFor(event: StoredEvent, endpointId: string, deliveryId: string): Promise<void> {
    await this.em.execute(
      `with event as (insert into webhook_events (id, tenant_id, type, data, created_at) values (?, ?, ?, ?::jsonb, ?) returning id, created_at)
       insert into webhook_deliveries (id, endpoint_id, event_id, attempt, status, next_attempt_at, created_at)
       select ?, ?, event.id, 1, 'pending', event.created_at, event.created_at from event`,
      [event.id, event.tenantId, event.type, JSON.stringify(event.data), event.createdAt, deliveryId, endpointId],
    );
  }

  async deliveries(endpointId: string, limit: number): Promise<WebhookDelivery[]> {
    const rows = await this.em.execute<Row[]>(
      `select ${DELIVERY} from webhook_deliveries d join webhook_events e on e.id = d.event_id
        where d.endpoint_id = ? order by d.created_at desc, d.attempt desc, d.id desc limit ?`,
      [endpointId, limit],
    );
    return rows.map(toDelivery);
  }

  async claimDue(now: Date, claimUntil: Date, limit: number, share: TenantShare): Promise<ClaimedDelivery[]> {
    const held = [...share.held].filter(([, n]) => n > 0);
    // Due attempts of tenants with room, ranked within their tenant (oldest first), taken in turns (each tenant's
    // first, then each one's second...) and locked, skipping rows another worker holds, with the claim checked again
    // on the row locked. Rows just past a tenant's room stand in for its rows another worker is claiming right now
    // (else two workers would both aim at the same first rows, and the second find them all taken); what is locked
    // is then cut back to each tenant's room. Ranking reads every due attempt: the cost grows with the backlog,
    // which stays short unless endpoints are slow (docs/decisions.md, Fairness and amplification).
    const rows = await this.em.execute<Row[]>(
      `with held (tenant_id, n) as (select * from unnest(?::text[], ?::int[])),
       ranked as (
         select x.id, x.next_attempt_at, w.tenant_id, greatest(?::int - coalesce(h.n, 0), 0) as room,
                row_number() over (partition by w.tenant_id order by x.next_attempt_at, x.id) as turn
           from webhook_deliveries x join webhook_endpoints w on w.id = x.endpoint_id left join held h on h.tenant_id = w.tenant_id
          where x.status in ('pending', 'sending') and x.next_attempt_at <= ?
            and (x.status = 'pending' or x.claimed_until < ?)
            and w.deleted_at is null and w.disabled_at is null
            and coalesce(h.n, 0) < ?::int),
       locked as (
         select x.id, r.tenant_id, r.turn, r.room, r.next_attempt_at
           from ranked r join webhook_deliveries x on x.id = r.id
          where r.turn <= r.room + ?::int
            and (x.status = 'pending' or (x.status = 'sending' and x.claimed_until < ?))
          order by r.turn > r.room, r.turn, r.next_attempt_at, x.id
          limit least(?::int, (select count(*) from ranked where turn <= room))
            for update of x skip locked),
       picked as (
         select id from (select id, turn, room, next_attempt_at, row_number() over (partition by tenant_id order by turn) as n from locked) l
          where n <= room order by turn, next_attempt_at, id limit ?::int),
       claimed as (
         update webhook_deliveries d set status = 'sending', claimed_until = ?, attempted_at = coalesce(d.attempted_at, ?)
          where d.id in (select id from picked)
         returning d.*),
       -- once per endpoint, not per attempt: a claim holds many attempts of few endpoints
       standing as (select w.id, ${REGISTRANT_ENDED} as registrant_ended from webhook_endpoints w where w.id in (select endpoint_id from claimed))
       select ${DELIVERY.replaceAll('d.', 'c.')}, e.tenant_id as event_tenant_id, e.data as event_data, e.created_at as event_created_at,
              ${ENDPOINT_COLUMNS.map((column) => `w.${column} as w_${column}`).join(', ')},
              coalesce((select f.attempted_at from webhook_deliveries f where f.endpoint_id = c.endpoint_id and f.event_id = c.event_id and f.attempt = 1), ?) as first_due_at,
              s.registrant_ended
         from claimed c join webhook_events e on e.id = c.event_id join webhook_endpoints w on w.id = c.endpoint_id join standing s on s.id = w.id
        order by c.next_attempt_at, c.id`,
      [textArray(held.map(([tenant]) => tenant)), `{${held.map(([, n]) => n).join(',')}}`, share.perTenant, now, now, share.perTenant, limit, now, limit, limit, claimUntil, now, now, now, now],
    );
    return rows.map((row) => ({
      delivery: toDelivery(row),
      event: { id: String(row.event_id), tenantId: String(row.event_tenant_id), type: String(row.type), data: dataOf(row.event_data), createdAt: date(row.event_created_at) },
      endpoint: toEndpoint(row, 'w_'),
      firstDueAt: date(row.first_due_at),
      registrantEnded: row.registrant_ended === true,
    }));
  }

  async finish(results: readonly AttemptResult[]): Promise<void> {
    const succeeded = results.filter((r) => r.ok);
    if (succeeded.length > 0) {
      await this.em.execute(
        `update webhook_deliveries d set status = 'succeeded', response_status = v.status, error = null, claimed_until = null, next_attempt_at = null
           from (select unnest(?::text[]) as id, unnest(?::int[]) as status) v where d.id = v.id`,
        [textArray(succeeded.map((r) => r.deliveryId)), `{${succeeded.map((r) => r.responseStatus ?? 'NULL').join(',')}}`],
      );
      const endpoints = [...new Set(succeeded.map((r) => r.endpointId))].sort();
      await this.em.execute(`update webhook_endpoints set failing_since = null where id = any(?::text[]) and failing_since is not null`, [textArray(endpoints)]);
    }
    for (const r of results) if (!r.ok) await this.failed(r);
  }

  private async failed(r: AttemptResult): Promise<void> {
    if (r.withheld) {
      await this.em.execute(`update webhook_deliveries set status = 'abandoned', error = ?, claimed_until = null, next_attempt_at = null where id = ?`, [r.error, r.deliveryId]);
      if (r.disable) await this.disable(r.endpointId, r.at, r.disable);
      return;
    }
    // a made attempt's next_attempt_at says when the next one is due (null: none)
    await this.em.execute(
      `update webhook_deliveries set status = 'failed', response_status = ?, error = ?, claimed_until = null, next_attempt_at = ? where id = ?`,
      [r.responseStatus, r.error, r.retry?.at ?? null, r.deliveryId],
    );
    if (r.retry) {
      await this.em.execute(
        `insert into webhook_deliveries (id, endpoint_id, event_id, attempt, status, next_attempt_at, created_at)
         select ?, endpoint_id, event_id, attempt + 1, 'pending', ?, ? from webhook_deliveries where id = ?
         on conflict (endpoint_id, event_id, attempt) do nothing`,
        [r.retry.id, r.retry.at, r.at, r.deliveryId],
      );
    }
    // failing since the first failed attempt was taken, the time its retry window counts from
    await this.em.execute(
      `update webhook_endpoints set failing_since = coalesce(failing_since, (select attempted_at from webhook_deliveries where id = ?), ?) where id = ?`,
      [r.deliveryId, r.at, r.endpointId],
    );
    if (r.disable) {
      await this.em.execute(`update webhook_endpoints set disabled_at = ?, disabled_reason = ? where id = ? and disabled_at is null`, [r.at, r.disable, r.endpointId]);
      await this.abandon(r.endpointId);
    }
  }

  /** Attempts still to make to an endpoint that will get no more. */
  private async abandon(endpointId: string): Promise<void> {
    await this.em.execute(`update webhook_deliveries set status = 'abandoned', claimed_until = null where endpoint_id = ? and status in ('pending', 'sending')`, [endpointId]);
  }
}
