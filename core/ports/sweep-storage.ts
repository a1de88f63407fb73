

/** The billing sweep's set-based steps: each is a few statements, whatever the number of machines. */
export interface SweepStore {
  /**
   * Pays every hourly block that has come due (at most one per instance per call) from each account's
   * balance, cheapest-in-time first, while the balance covers it; a block that does not fit, and every
   * later one of that account, stays unpaid (it accrues to owed). Returns how many blocks were paid.
   */
  payDueBlocks(now: Date): Promise<number>;
  /**
   * Tenants that may need their breaker tripped: a billed machine past its paid time (funds may be
   * exhausted), machines that together burn more than the account's maximum (or `defaultMaxBurn`), or
   * billed machines while unsettled usage is positive and at least the balance (available <= 0 by usage alone).
   */
  breakerCandidates(now: Date, defaultMaxBurnCentsPerHour: number | null): Promise<string[]>;
  /** Records that the providers still show these instances' machines (one statement for all). */
  markSeen(instanceIds: readonly string[], at: Date): Promise<void>;
  /**
   * Since when the oldest start that is due waits to be taken: the earliest starts_at of a scheduled reservation
   * due by `now`, the creation of a pending spot claim never tried yet, or when a machine to recover was found lost; null when none waits.
   */
  oldestDueStart(now: Date): Promise<Date | null>;
}
