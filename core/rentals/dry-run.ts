import { requireRentalsOpen } from '../market/rentals-open.ts';
import type { RentalFigures } from '../quotes/quote.ts';
import type { Token } from '../tenancy/token.ts';
import { chooseTarget } from './choose-node.ts';
import { rehearseRental } from './commit-rental.ts';
import type { RentalsContext } from './context.ts';
import { rentalOptions } from './rent.ts';
import type { RentRequest } from './rent-request.ts';

/**
 * What POST /v1/instances would do, done up to its transaction and rolled back (docs/decisions.md, "Rent by
 * specification and quotes"): the node chosen and priced live as for the rental, every check of the spend gate
 * passed or answered, nothing charged, committed, launched or kept (its idempotency key neither taken nor replayed).
 */
export async function dryRun(ctx: RentalsContext, caller: Token, asked: RentRequest): Promise<RentalFigures> {
  requireRentalsOpen(ctx.market.settings, 'Nothing was charged.');
  const { request, quote, rate, held } = await chooseTarget(ctx, caller, asked);
  const options = await rentalOptions(ctx, caller.tenantId, request, quote.node.provider);
  return rehearseRental(ctx, caller, request, { quote, rate, digest: '', options, ...(held && { quoteId: held.id }) });
}
