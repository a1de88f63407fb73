import { DomainError } from '../errors.ts';
import type { SearchTerms } from '../market/search-terms.ts';
import type { Cents } from '../money.ts';

export const QUOTE_ID_PREFIX = 'quo';

/** How long a quote may be rented by: long enough to decide, short enough that its price still means something. */
export const QUOTE_VALID_MS = 120_000;

/** Unused quotes are kept this long past their expiry (a late use is told it expired), then the sweep deletes them. */
export const KEEP_EXPIRED_MS = 24 * 3_600_000;

/**
 * A rental priced and checked through the spend gate without committing anything (docs/decisions.md, "Rent by
 * specification and quotes"): what it would cost, charge now, commit and leave of the cap.
 */
export interface RentalFigures {
  nodeId: string;
  rateCentsPerHour: Cents;
  perGpuCents: Cents;
  chargedNowCents: Cents;
  commitmentCents: Cents;
  /** What the token chain's tightest cap leaves once this rental commits; null without a cap. */
  capRemainingAfterCents: Cents | null;
}

/** A quote kept for its tenant: its node rented for its hours at no more than its rate, once, until it expires. */
export interface RentalQuote extends RentalFigures {
  id: string;
  tenantId: string;
  tokenId: string;
  /** The search that chose the node, when one did. */
  search: SearchTerms | null;
  terminationHours: number | null;
  name: string | null;
  createdAt: Date;
  expiresAt: Date;
  /** The rental that used it; null while unused. */
  instanceId: string | null;
}

/** A quote a rental may still use now (the idempotent replay of the rental that used it is answered before this). */
export function usableQuote(quote: RentalQuote, now: Date): RentalQuote {
  if (quote.instanceId !== null) {
    throw new DomainError('CONFLICT', `quote ${quote.id} was used by instance ${quote.instanceId}; a quote rents once (send that rental's idempotency_key to get it again), so make a new quote`);
  }
  if (now.getTime() > quote.expiresAt.getTime()) {
    throw new DomainError('CONFLICT', `quote ${quote.id} expired at ${quote.expiresAt.toISOString()}; make a new quote with POST /v1/quotes`);
  }
  return quote;
}

/** The rate a quote's node is rented at: its price now, when that is at most the quoted rate. */
export function quotedRate(quote: RentalQuote, liveRateCentsPerHour: Cents): Cents {
  if (liveRateCentsPerHour > quote.rateCentsPerHour) {
    throw new DomainError(
      'PRICE_CHANGED',
      `node ${quote.nodeId} costs ${liveRateCentsPerHour} cents an hour now, above the ${quote.rateCentsPerHour} quoted (${quote.id}); nothing was charged. Make a new quote with POST /v1/quotes`,
    );
  }
  return liveRateCentsPerHour;
}
