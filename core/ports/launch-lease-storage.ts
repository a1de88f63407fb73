/**
 * Leases on creates in flight (docs/decisions.md, "Crash anywhere, lose nothing"): a rental's create belongs to the
 * process that committed it while that process renews its lease; a create whose lease ran out is nobody's.
 */
export interface LaunchLeaseStore {
  /** Taken in the rental's transaction: the create is `holder`'s until `until`. */
  take(instanceId: string, holder: string, until: Date): Promise<void>;
  /** Pushes out to `until` the leases `holder` still holds on these creates. */
  renew(holder: string, instanceIds: readonly string[], until: Date): Promise<void>;
  /** Given up in the transaction that records the create's answer. */
  release(instanceId: string): Promise<void>;
  /** Who holds the create's lease and until when, or null when nobody holds one. */
  of(instanceId: string): Promise<{ holder: string; until: Date } | null>;
}
