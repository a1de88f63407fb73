import type { Granularity } from '../billing/periods.ts';
import type { NewUsage, Settlement, StoredUsage, UsageFilter, UsagePeriodRow, UsageRecord } from '../metering/usage.ts';
import type { Cents } from '../money.ts';

/** Metered usage: records, their running totals per (tenant, kind), and their settlement. */
export interface UsageStore {
  /**
   * Appends a record under its (tenant, kind) running total's row lock (the total opens at zero on first
   * use), so records of one kind are metered one at a time: its amount is what it adds to ceil(exact total)
   * in cents (core/metering/rounding.ts). One atomic call. null: the tenant used the unique key before
   * (nothing changed), or there is no such tenant.
   */
  add(usage: NewUsage): Promise<UsageRecord | null>;
  /**
   * Several records in one atomic call, each as `add` would meter it (answers in the order given); they are
   * metered in (tenant, kind) order, so calls made at once lock running totals in one order.
   */
  addMany(usages: readonly NewUsage[]): Promise<(UsageRecord | null)[]>;
  byUniqueKey(tenantId: string, uniqueKey: string): Promise<StoredUsage | null>;
  /** Newest first (started_at). */
  list(tenantId: string, filter: UsageFilter): Promise<UsageRecord[]>;
  /** Sums per period (UTC month or ISO week of started_at) and kind, newest period first. */
  periods(tenantId: string, granularity: Granularity, year?: number): Promise<UsagePeriodRow[]>;
  /** What the tenant's records of one kind referencing `reference`, started at or after `since`, were charged in all. */
  chargedFor(tenantId: string, kind: string, reference: string, since: Date): Promise<Cents>;
  /** What the tenant's unsettled records add up to: part of owed_cents. */
  unsettledCents(tenantId: string): Promise<Cents>;
  /** The same for every tenant that has any. */
  unsettledByTenant(): Promise<Map<string, Cents>>;
  /**
   * Posts unsettled records to the ledger (kind usage, key usage:<record id>), oldest first per tenant, while
   * the balance covers each; of one tenant, or of every tenant. Locks the accounts it settles.
   */
  settle(at: Date, tenantId?: string): Promise<Settlement>;
}
