import type { LedgerKind } from '../../core/billing/account.ts';
import type { Metrics } from '../../core/ports/metrics.ts';

/** Where the stores tell what they posted to the ledger: counted once the transaction commits, never before. */
export interface LedgerTally {
  /** `entries` entries of one kind and sign, `amountCents` in all (signed). */
  posted(kind: LedgerKind, amountCents: number, entries: number): void;
}

/** Outside a transaction each statement commits by itself: told at once. */
export const immediateTally = (metrics: () => Metrics): LedgerTally => ({
  posted: (kind, amountCents, entries) => metrics().ledgerPosted(kind, amountCents, entries),
});

/** The kinds whose debits a monthly budget counts (docs/decisions.md, "Monthly budgets"), as migration 0031's trigger does. */
const SPEND_KINDS: ReadonlySet<LedgerKind> = new Set(['rental_hour', 'usage']);

/** Inside a transaction: kept until it commits, dropped if it rolls back. */
export class PendingLedgerTally implements LedgerTally {
  private readonly pending: [kind: LedgerKind, amountCents: number, entries: number][] = [];

  posted(kind: LedgerKind, amountCents: number, entries: number): void {
    if (entries > 0) this.pending.push([kind, amountCents, entries]);
  }

  /** Whether some charge a budget counts was posted (a statement's sum is negative when any of its entries was). */
  charged(): boolean {
    return this.pending.some(([kind, amountCents]) => SPEND_KINDS.has(kind) && amountCents < 0);
  }

  committed(metrics: Metrics): void {
    for (const [kind, amountCents, entries] of this.pending) metrics.ledgerPosted(kind, amountCents, entries);
  }
}
