import type { RentalQuote } from '../quotes/quote.ts';

/** Quotes: reads are scoped to one tenant, so another tenant's ids read as absent. */
export interface QuoteStore {
  add(quote: RentalQuote): Promise<void>;
  get(tenantId: string, quoteId: string): Promise<RentalQuote | null>;
  /** The quote row alone, locked until the transaction ends. */
  lock(tenantId: string, quoteId: string): Promise<RentalQuote | null>;
  markUsed(quoteId: string, instanceId: string): Promise<void>;
  /** Deletes up to `limit` quotes of every tenant that expired before `before` and were never used; answers how many. */
  prune(before: Date, limit: number): Promise<number>;
}
