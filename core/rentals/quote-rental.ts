import { NO_RENTAL_OPTIONS } from '../bookings/booking-rental.ts';
import { invalidInput } from '../errors.ts';
import { requireRentalsOpen } from '../market/rentals-open.ts';
import type { SearchTerms } from '../market/search-terms.ts';
import { QUOTE_ID_PREFIX, QUOTE_VALID_MS, type RentalQuote } from '../quotes/quote.ts';
import type { Token } from '../tenancy/token.ts';
import { chooseTarget } from './choose-node.ts';
import { rehearseRental } from './commit-rental.ts';
import type { RentalsContext } from './context.ts';
import { resolveRentalOptions } from './rental-options.ts';

export interface QuoteRequest {
  /** Exactly one of nodeId and search. */
  nodeId: string | null;
  search: SearchTerms | null;
  terminationHours: number | null;
  /** The rental's name when it does not send one. */
  name: string | null;
}

/**
 * A quote (docs/decisions.md, "Rent by specification and quotes"): the node chosen and priced live as a rental
 * would be, the rental rehearsed through the spend gate (so a quote is refused as the rental would be), kept for
 * QUOTE_VALID_MS. Nothing is charged or committed; POST /v1/instances with its id rents the node for its hours at
 * no more than its rate, once.
 */
export async function quoteRental(ctx: RentalsContext, caller: Token, asked: QuoteRequest): Promise<RentalQuote> {
  if ((asked.nodeId === null) === (asked.search === null)) {
    throw invalidInput(['body', asked.nodeId === null ? 'node_id' : 'search'], 'send exactly one of node_id (a node from GET /v1/gpus) and search (GET /v1/gpus filters)');
  }
  requireRentalsOpen(ctx.market.settings, 'Nothing was quoted.');
  const request = {
    ...NO_RENTAL_OPTIONS,
    sshKeyId: null,
    templateId: null,
    nodeId: asked.nodeId,
    ...(asked.search && { search: asked.search }),
    name: asked.name,
    idempotencyKey: null,
    terminationHours: asked.terminationHours,
  };
  const target = await chooseTarget(ctx, caller, request);
  const options = await resolveRentalOptions(ctx.catalog, caller.tenantId, target.request);
  const figures = await rehearseRental(ctx, caller, target.request, { quote: target.quote, rate: target.rate, digest: '', options });
  const now = ctx.clock.now();
  const quote: RentalQuote = {
    ...figures,
    id: ctx.ids.newId(QUOTE_ID_PREFIX),
    tenantId: caller.tenantId,
    tokenId: caller.id,
    search: asked.search,
    terminationHours: asked.terminationHours,
    name: asked.name,
    createdAt: now,
    expiresAt: new Date(now.getTime() + QUOTE_VALID_MS),
    instanceId: null,
  };
  await ctx.storage.autocommit((uow) => uow.quotes.add(quote));
  return quote;
}
