import type { Instance } from '../rentals/instance.ts';

export interface InstanceStore {
  add(instance: Instance): Promise<void>;
  get(tenantId: string, instanceId: string): Promise<Instance | null>;
  /** Locked until the transaction ends. */
  lock(tenantId: string, instanceId: string): Promise<Instance | null>;
  byIdempotencyKey(tenantId: string, key: string): Promise<Instance | null>;
  /** Newest first. */
  list(tenantId: string, limit: number): Promise<Instance[]>;
  /** Instances that may exist upstream (provisioning, running, rebooting, terminating) of one tenant. */
  live(tenantId: string): Promise<Instance[]>;
  /** The tenant's billed instances running past their paid time (the only ones that owe anything). */
  overdue(tenantId: string, now: Date): Promise<Instance[]>;
  /** Live instances of every tenant. */
  allLive(): Promise<Instance[]>;
  /** Live instances of every tenant at one provider. */
  liveAt(provider: string): Promise<Instance[]>;
  /** Any tenant's instance by id, locked until the transaction ends (the reconciler's check of a label). */
  lockById(instanceId: string): Promise<Instance | null>;
  /** Billed instances whose scheduled removal or window end is at or before `now`. */
  dueForRemoval(now: Date): Promise<Instance[]>;
  update(instance: Instance): Promise<void>;
}
