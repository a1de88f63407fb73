export interface SweepSettings {
  /** A rental whose machine never started is failed and refunded in full after this long. */
  provisioningDeadlineMs: number;
  /** Runaway protection for accounts without their own maximum, in cents per hour; null: none. */
  defaultMaxBurnCentsPerHour: number | null;
  /**
   * Real time a pass may take (at most MAX_PASS_BUDGET_MS). Starts not taken by then, and cloud clean-up not yet
   * done, wait for the next pass; starts in flight go on by themselves. Default DEFAULT_PASS_BUDGET_MS: under the
   * minute between scheduled passes, so a pass never makes the next one skip.
   */
  passBudgetMs?: number;
  /** Cloud calls at once per provider in reconcile, removals and breakers (each provider's own pacing still applies). Default 4. */
  providerConcurrency?: number;
}

export const MAX_PASS_BUDGET_MS = 120_000;
export const DEFAULT_PASS_BUDGET_MS = 50_000;
export const DEFAULT_PROVIDER_CONCURRENCY = 4;
