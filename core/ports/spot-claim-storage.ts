import type { SpotClaim, SpotClaimView } from '../spot/spot-claim.ts';

/** Spot claims: reads are scoped to one tenant, so another tenant's ids read as absent. */
export interface SpotClaimStore {
  add(claim: SpotClaim): Promise<void>;
  get(tenantId: string, claimId: string): Promise<SpotClaimView | null>;
  /** The claim row alone, locked until the transaction ends. */
  lock(tenantId: string, claimId: string): Promise<SpotClaim | null>;
  /** Newest first. */
  list(tenantId: string, limit: number): Promise<SpotClaimView[]>;
  /**
   * Takes up to `limit` open claims of every tenant that need the sweep, ids after `afterId` in id order: pending
   * ones, active ones whose machine's billing ended, and those whose ends_at passed; not those another pass took
   * since `staleBefore`. Each is marked claimed at `now` in one statement; rows another transaction holds are
   * skipped, so two sweeps never take the same one. Pending claims of a node at one of `busyProviders` are left for later.
   */
  claimOpen(now: Date, staleBefore: Date, limit: number, afterId: string, busyProviders?: readonly string[]): Promise<SpotClaimView[]>;
  update(claim: SpotClaim): Promise<void>;
}
