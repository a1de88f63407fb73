/**
 * What the crash test reads of a tenant at one moment, from the database (snapshot-sql.ts) or through the API
 * (snapshot-api.ts), with the fake cloud's machines beside it; invariants.ts checks it against the test's model.
 * A part a source cannot read in full is null (or undefined on a row), and the checks that need it are left out.
 */
export interface Snapshot {
  /** The server's clock when it was read, in ms. */
  now: number;
  balance: number;
  /** The tenant's ledger lines; null when the source cannot list them all. */
  ledger: Line[] | null;
  instances: InstanceRow[];
  /** Machines upstream (the fake cloud's pods), by the instance id they carry as label. */
  machines: Map<string, number>;
  /** Usage records with their idempotency key (the database only), or without (the API). */
  usage: UsageRow[] | null;
  /** What the running total of each metered kind has charged (usage_totals; the database only). */
  usageCharged: Map<string, number> | null;
  /** The capped token's figures. */
  capped: { committed: number; burn: number | null } | null;
  /** The monthly budget's spent figure for the month of `now`. */
  budgetSpent: number | null;
  /** Ids of the tenant's events in the outbox (the database only). */
  events: string[] | null;
}

export interface Line {
  kind: string;
  amount: number;
  reference: string | null;
  createdAt: number;
}

export interface InstanceRow {
  id: string;
  status: string;
  rate: number;
  charged: number;
  createdAt: number;
  paidUntil: number;
  terminatedAt: number | null;
  startedAt: number | null;
  /** The machine recorded; undefined when the source does not say. */
  machineId?: string | null;
  key: string | null;
  /** The token it was rented with; undefined when the source does not say. */
  tokenId?: string;
}

export interface UsageRow {
  id: string;
  /** Its idempotency key; undefined when the source does not say. */
  key?: string | null;
  kind: string;
  amount: number;
  settled: boolean;
}

export const LIVE = new Set(['provisioning', 'running', 'rebooting']);

export const time = (value: unknown): number => (value instanceof Date ? value.getTime() : new Date(String(value)).getTime());
export const timeOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : time(value));
