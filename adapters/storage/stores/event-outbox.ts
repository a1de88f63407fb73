import type { EntityManager } from '@mikro-orm/sql';
import { EVENT_ID_PREFIX, type NewEvent } from '../../../core/events/event.ts';
import type { EventOutbox } from '../../../core/ports/event-outbox.ts';
import type { Ids } from '../../../core/ports/ids.ts';
import { DELIVERY_ID_PREFIX } from '../../../core/webhooks/endpoint.ts';

/**
 * The outbox in the unit of work's transaction: one statement records the event and the first attempt for each
 * endpoint of the tenant that listens to its type (none deleted or disabled), due at once.
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
    // a first attempt's id: its prefix, then the random parts of the event's and the endpoint's ids (fixed length)
    await this.em.execute(
      `with event as (insert into webhook_events (id, tenant_id, type, data, created_at) values (?, ?, ?, ?::jsonb, ?) returning id, tenant_id, type, created_at)
       insert into webhook_deliveries (id, endpoint_id, event_id, attempt, status, next_attempt_at, created_at)
       select ? || '_' || substr(event.id, 5) || substr(w.id, 5), w.id, event.id, 1, 'pending', event.created_at, event.created_at
         from event join webhook_endpoints w on w.tenant_id = event.tenant_id
        where w.deleted_at is null and w.disabled_at is null and (w.events is null or event.type = any(w.events))`,
      [id, event.tenantId, event.type, JSON.stringify(event.data), event.at, DELIVERY_ID_PREFIX],
    );
    return id;
  }
}
