import type { Cents } from '../money.ts';

/** One metered use of a resource; quantities and prices are exact decimal text. */
export interface UsageRecord {
  id: string;
  tenantId: string;
  resourceKind: string;
  /** Canonical decimal text: "1.5", "40", "0.000001". */
  quantity: string;
  unit: string;
  unitPriceUsd: string;
  /** What this record added to the (tenant, kind) total charged: one rounding over all its records. */
  amountCents: Cents;
  startedAt: Date;
  endedAt: Date | null;
  reference: string | null;
  /** When its ledger entry was posted; null while it counts in owed_cents. */
  settledAt: Date | null;
  createdAt: Date;
}

/** A record as stored, with what makes its ingestion idempotent. */
export interface StoredUsage extends UsageRecord {
  uniqueKey: string;
  /** The public request it came from, in canonical form (a retry with another body is a conflict); null for the system's. */
  request: string | null;
}

export type NewUsage = Omit<StoredUsage, 'amountCents' | 'settledAt'>;

export interface UsageFilter {
  resourceKind?: string;
  /** Inclusive, on started_at. */
  since?: Date;
  /** Exclusive, on started_at. */
  until?: Date;
  limit: number;
}

/** One kind's usage in one period, as the storage sums it. */
export interface UsagePeriodRow {
  periodStart: Date;
  resourceKind: string;
  quantity: string;
  amountCents: Cents;
  records: number;
}

export interface Settlement {
  settled: number;
  amountCents: Cents;
}
