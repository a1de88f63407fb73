import type { NewEvent } from '../events/event.ts';

/**
 * The event outbox, part of a unit of work: an event emitted here commits or rolls back
 * with the change it tells, and every endpoint of the tenant that listens to its type gets a delivery.
 */
export interface EventOutbox {
  /** Records the event and schedules its deliveries, when some endpoint listens to it; answers its id. */
  emit(event: NewEvent): Promise<string>;
}
