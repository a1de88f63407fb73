import type { EntityManager } from '@mikro-orm/sql';
import { EVENT_ID_PREFIX, type NewEvent } from '../../../core/events/event.ts';
import type { EventOutbox } from '../../../core/ports/event-outbox.ts';
import type { Ids } from '../../../core/ports/ids.ts';
import { DELIVERY_ID_PREFIX } from '../../../core/webhooks/endpoint.ts';

/**
 * The outbox in the unit of work's transaction: one statement records the event and the first attempt for each
 * endpoint of the tenant that listens to its type (none deleted or disabled), due at once. Without a listener
 * nothing is written: no endpoint registered later gets older events anyway.
 */
export class MikroEventOutbox implements EventOutbox {
  private readonly em: EntityManager;
  private readonly ids: Ids;

  constructor(em: EntityManager, ids: Ids) {
    this.em = em;
    this.ids = ids;
  }

  async emit(event: NewEvent): Promise<string> {
    const id = this.ids.newId(EVENT_ID_PREFIX);
    // a tenant nobody listens for (most of them) costs one index read: the event is recorded only for listeners
    await this.em.execute(
      `with listening as (
         select w.id from webhook_endpoints w
          where w.tenant_id = ? and w.deleted_at is null and w.disabled_at is null and (w.events is null or ? = any(w.events))),
       event as (
         insert into webhook_events (id, tenant_id, type, data, created_at) select ?, ?, ?, ?::jsonb, ? where exists (select 1 from listening)
         returning id, created_at)
       insert into webhook_deliveries (id, endpoint_id, event_id, attempt, status, next_attempt_at, created_at)
       select ? || '_' || substr(event.id, 5) || substr(listening.id, 5), listening.id, event.id, 1, 'pending', event.created_at, event.created_at
         from event cross join listening`,
      [event.tenantId, event.type, id, event.tenantId, event.type, JSON.stringify(event.data), event.at, DELIVERY_ID_PREFIX],
    );
    return id;
  }

  async emitMany(events: readonly NewEvent[]): Promise<void> {
    if (events.length === 0) return;
    if (events.length === 1) {
      await this.emit(events[0]!);
      return;
    }
    const rows = events.map((event) => ({ id: this.ids.newId(EVENT_ID_PREFIX), tenant_id: event.tenantId, type: event.type, data: event.data, created_at: event.at.toISOString() }));
    // as emit, set-based: each event recorded only where an endpoint of its tenant listens to its type
    await this.em.execute(
      `with given as (
         select * from jsonb_to_recordset(?::jsonb) as e(id text, tenant_id text, type text, data jsonb, created_at timestamptz)),
       listening as (
         select g.id as event_id, w.id as endpoint_id from given g join webhook_endpoints w
             on w.tenant_id = g.tenant_id and w.deleted_at is null and w.disabled_at is null and (w.events is null or g.type = any(w.events))),
       event as (
         insert into webhook_events (id, tenant_id, type, data, created_at)
         select g.id, g.tenant_id, g.type, g.data, g.created_at from given g where exists (select 1 from listening l where l.event_id = g.id)
         returning id, created_at)
       insert into webhook_deliveries (id, endpoint_id, event_id, attempt, status, next_attempt_at, created_at)
       select ? || '_' || substr(event.id, 5) || substr(l.endpoint_id, 5), l.endpoint_id, event.id, 1, 'pending', event.created_at, event.created_at
         from event join listening l on l.event_id = event.id`,
      [JSON.stringify(rows), DELIVERY_ID_PREFIX],
    );
  }
}
