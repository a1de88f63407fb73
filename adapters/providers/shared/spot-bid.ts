import type { Offer } from '../../../core/market/offer.ts';
import { ProviderFailure, type SpotMachineRequest } from '../../../core/ports/providers.ts';
import { compareDecimal, isPlainDecimal } from './decimal.ts';

/**
 * The bid a spot create goes ahead at, for a cloud whose spot price is its own rather than an auction (a fixed
 * price list): the offer checked live must have spot capacity, and the bid must be at or over its spot price.
 * Anything else is refused before a call is made (ProviderFailure rejected), so nothing runs upstream.
 */
export function spotBid(provider: string, request: SpotMachineRequest, offer: Offer | null): string {
  if (!offer) throw new ProviderFailure(provider, 'rejected', `no such offer: ${request.offerId}`);
  if (!offer.spotPriceUsdPerHour) throw new ProviderFailure(provider, 'rejected', `${request.offerId} has no spot capacity now`);
  const bid = request.bidUsdPerHour.trim();
  if (!isPlainDecimal(bid) || compareDecimal(bid, offer.spotPriceUsdPerHour) < 0) {
    throw new ProviderFailure(provider, 'rejected', `bid ${request.bidUsdPerHour} is under the spot price ${offer.spotPriceUsdPerHour}`);
  }
  return bid;
}

/**
 * spotBid on the offer as the cloud states it now: a spot create reads the live price first, and a failure to read
 * it is the adapter's own (`readFailure`), so nothing is made at a price the bid may not cover.
 */
export async function liveSpotBid(
  provider: string,
  request: SpotMachineRequest,
  liveOffer: () => Promise<Offer | null>,
  readFailure: (error: unknown) => ProviderFailure,
): Promise<string> {
  const offer = await liveOffer().catch((error: unknown) => {
    throw readFailure(error);
  });
  return spotBid(provider, request, offer);
}
