import type { EntityManager } from '@mikro-orm/sql';
import { instanceEvents, type InstanceBefore } from '../../../core/events/instance-events.ts';
import type { EventOutbox } from '../../../core/ports/event-outbox.ts';
import type { Instance, InstanceStatus } from '../../../core/rentals/instance.ts';
import { MikroInstanceStore } from './instance-store.ts';
import { dateOrNull, type Row } from './sql-rows.ts';

/**
 * Instances whose every status change is told to the outbox in the same transaction: whichever
 * path changes an instance (a rental, a termination, the reconciler, the sweep), the event cannot be missed.
 */
export class EventedInstanceStore extends MikroInstanceStore {
  private readonly db: EntityManager;
  private readonly events: EventOutbox;
  /** What rows locked in this unit of work held: every caller locks a row before it updates it, so no read is needed. */
  private readonly locked = new Map<string, InstanceBefore>();

  constructor(em: EntityManager, events: EventOutbox) {
    super(em);
    this.db = em;
    this.events = events;
  }

  override async lock(tenantId: string, instanceId: string): Promise<Instance | null> {
    return this.remember(await super.lock(tenantId, instanceId));
  }

  override async lockById(instanceId: string): Promise<Instance | null> {
    return this.remember(await super.lockById(instanceId));
  }

  override async update(instance: Instance): Promise<void> {
    const before = this.locked.get(instance.id) ?? (await this.read(instance.id));
    await super.update(instance);
    this.remember(instance);
    for (const event of instanceEvents(before, instance)) await this.events.emit(event);
  }

  private remember(instance: Instance | null): Instance | null {
    if (instance) this.locked.set(instance.id, { status: instance.status, preemptedAt: instance.preemptedAt });
    return instance;
  }

  /** A row updated without being locked through this store first: what it holds now. */
  private async read(instanceId: string): Promise<InstanceBefore | null> {
    const [row] = await this.db.execute<Row[]>(`select status, preempted_at from instances where id = ?`, [instanceId]);
    return row ? { status: row.status as InstanceStatus, preemptedAt: dateOrNull(row.preempted_at) } : null;
  }
}
