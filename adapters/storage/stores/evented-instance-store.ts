import type { EntityManager } from '@mikro-orm/sql';
import { instanceEvents } from '../../../core/events/instance-events.ts';
import type { EventOutbox } from '../../../core/ports/event-outbox.ts';
import type { Instance, InstanceStatus } from '../../../core/rentals/instance.ts';
import { MikroInstanceStore } from './instance-store.ts';
import { dateOrNull, type Row } from './sql-rows.ts';

/**
 * Instances whose every status change is told to the outbox in the same transaction (DESIGN.md §15): whichever
 * path changes an instance (a rental, a termination, the reconciler, the sweep), the event cannot be missed.
 */
export class EventedInstanceStore extends MikroInstanceStore {
  private readonly db: EntityManager;
  private readonly events: EventOutbox;

  constructor(em: EntityManager, events: EventOutbox) {
    super(em);
    this.db = em;
    this.events = events;
  }

  override async update(instance: Instance): Promise<void> {
    // the row is locked by the caller: what it held before this update
    const [row] = await this.db.execute<Row[]>(`select status, preempted_at from instances where id = ?`, [instance.id]);
    await super.update(instance);
    const before = row ? { status: row.status as InstanceStatus, preemptedAt: dateOrNull(row.preempted_at) } : null;
    for (const event of instanceEvents(before, instance)) await this.events.emit(event);
  }
}
