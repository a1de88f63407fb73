import type { Recovery } from '../recovery/recovery.ts';

/** Managed recoveries, a row per instance that asked for one (docs/decisions.md, "Managed recovery"). */
export interface RecoveryStore {
  add(recovery: Recovery): Promise<void>;
  /** The row, locked until the transaction ends. */
  lock(instanceId: string): Promise<Recovery | null>;
  /**
   * The machine ended without being asked (lost, preempted, failed at its provider): a watched recovery becomes due
   * at `at`. False when the instance has none, or it was marked already.
   */
  markDue(instanceId: string, at: Date): Promise<boolean>;
  /**
   * Takes up to `limit` due recoveries of every tenant (but `except`), and recovering ones claimed before
   * `staleBefore` (a runner that stopped half way), marking them recovering, claimed at `now`, in one statement;
   * rows another transaction holds are skipped, so two runners never take the same one.
   */
  claimDue(now: Date, staleBefore: Date, limit: number, except: readonly string[]): Promise<Recovery[]>;
  update(recovery: Recovery): Promise<void>;
  /** The nodes of the machines of this one's chain: itself and every machine it replaces, back to the first. */
  chainNodes(instanceId: string): Promise<string[]>;
}
