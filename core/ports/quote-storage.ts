import type { RentalQuote } from '../quotes/quote.ts';

/** Quotes: reads are scoped to one tenant, so another tenant's ids read as absent. */
export interface QuoteStore {
  /** Adds the quote; the tenant's quotes expired before `forgetBefore` and never used go. */
  add(quote: RentalQuote, forgetBefore: Date): Promise<void>;
  get(tenantId: string, quoteId: string): Promise<RentalQuote | null>;
  /** The quote row alone, locked until the transaction ends. */
  lock(tenantId: string, quoteId: string): Promise<RentalQuote | null>;
  markUsed(quoteId: string, instanceId: string): Promise<void>;
}
