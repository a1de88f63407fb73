import type { Volume } from '../volumes/volume.ts';

/** A tenant's volumes. */
export interface VolumeStore {
  add(volume: Volume): Promise<void>;
  get(tenantId: string, volumeId: string): Promise<Volume | null>;
  /** The tenant's volumes among `volumeIds`, locked (in id order) until the transaction ends. */
  lockMany(tenantId: string, volumeIds: readonly string[]): Promise<Volume[]>;
  /** The tenant's volumes that are not deleted, newest first. */
  list(tenantId: string): Promise<Volume[]>;
  update(volume: Volume): Promise<void>;
  attach(volumeIds: readonly string[], instanceId: string): Promise<void>;
  /** The instance ended: its volumes are available again. */
  detachFrom(instanceId: string): Promise<void>;
  /** Volumes of every tenant still `creating` at `provider` (their create had no answer), oldest first. */
  creatingAt(provider: string): Promise<Volume[]>;
  /** Volumes of any tenant among `volumeIds` (the labels a provider listed), unlocked. */
  byIds(volumeIds: readonly string[]): Promise<Volume[]>;
  /** One volume of any tenant, locked until the transaction ends; null when there is none. */
  lockById(volumeId: string): Promise<Volume | null>;
  /**
   * Volumes with started hours of storage not yet recorded at `now` (deleted ones up to their deletion, those with
   * a window up to its end).
   */
  withHoursToRecord(now: Date): Promise<Volume[]>;
  /** What the tenant's volumes that exist or may exist upstream (creating, available, attached) hold, in GB. */
  heldGb(tenantId: string): Promise<number>;
  /** Volumes of every tenant whose window ended at or before `now` and that are not deleted yet, oldest end first. */
  expired(now: Date, limit: number): Promise<Volume[]>;
}
