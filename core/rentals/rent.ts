import { crashPoint } from '../crash-points.ts';
import { DomainError } from '../errors.ts';
import type { Quote } from '../market/node-chooser.ts';
import { requireRentalsOpen } from '../market/rentals-open.ts';
import type { Cents } from '../money.ts';
import { isSpotMarket, type Provider } from '../ports/providers.ts';
import { requestDigest } from '../spending/idempotency.ts';
import type { Token } from '../tenancy/token.ts';
import { chooseTarget, type Target } from './choose-node.ts';
import { commitRental } from './commit-rental.ts';
import type { RentalsContext } from './context.ts';
import { answeredBy, launch, upstreamBidUsd } from './launch.ts';
import type { Adoption, Rented, RentRequest } from './rent-request.ts';
import { missingOptions, resolveRentalOptions, type ResolvedOptions } from './rental-options.ts';
import { madeMeanwhile, replay } from './replay.ts';

/**
 * Rents a node (docs/decisions.md, "One node chooser", "One spend gate", "Rent by specification and quotes"). The
 * order of work: an earlier request with the key answered as it was, renting open, the node chosen and its price
 * checked live upstream (choose-node.ts: a node id, a search or a quote), the options resolved, then one
 * transaction that locks the account and the token chain, passes the spend gate, inserts the instance and charges
 * the first hour (commit-rental.ts); only then the provider is called, with our instance id as its label
 * (launch.ts), and the answer waits for it at most `answerWithinMs`.
 */
export async function rent(ctx: RentalsContext, caller: Token, asked: RentRequest, adoption?: Adoption): Promise<Rented> {
  const answerBy = performance.now() + ctx.settings.answerWithinMs;
  // the request as asked, before a node is chosen for it: a retry replays whatever node the first one chose
  const digest = requestDigest(ctx.secrets, asked);
  if (asked.idempotencyKey) {
    const earlier = await ctx.storage.read((uow) => uow.instances.byIdempotencyKey(caller.tenantId, asked.idempotencyKey!));
    if (earlier) return replay(ctx, earlier, digest);
  }
  requireRentalsOpen(ctx.market.settings, 'Nothing was charged.');
  let target: Target;
  try {
    target = await chooseTarget(ctx, caller, asked);
  } catch (error) {
    if (!(error instanceof DomainError && (error.code === 'INVALID_INPUT' || error.code === 'NOT_FOUND'))) {
      const made = await madeMeanwhile(ctx, caller, asked.idempotencyKey, digest);
      if (made) return made;
    }
    throw error;
  }
  const { request, quote } = target;
  const node = quote.node;
  const spot = adoption?.spot ?? null;
  const rate = spot ? spotRate(quote, spot.bidCentsPerGpuHour) : target.rate;
  const options = await rentalOptions(ctx, caller.tenantId, request, node.provider);

  const created = await commitRental(ctx, caller, request, { quote, rate, digest, options, ...(target.held && { quoteId: target.held.id }) }, adoption);
  if (created.replayed) return replay(ctx, created.instance, digest);
  crashPoint('after-rental-commit');
  ctx.metrics.rentalCreated(node.provider.name);
  const bid = spot ? upstreamBidUsd(spot.bidCentsPerGpuHour * created.instance.gpuCount, ctx.market.settings.markupBps) : null;
  const launching = launch(ctx, node.provider, created.instance, { ...options.setup, volumeIds: created.upstreamVolumeIds ?? [] }, bid, adoption);
  const settled = launching.then(
    () => undefined,
    () => undefined,
  );
  ctx.launching.set(created.instance.id, settled);
  void settled.then(() => ctx.launching.delete(created.instance.id));
  return { instance: await answeredBy(launching, answerBy, created.instance), replayed: false };
}

/** The rental's options resolved, refused (409) when the node's provider cannot carry them out. */
export async function rentalOptions(ctx: RentalsContext, tenantId: string, request: RentRequest, provider: Provider): Promise<ResolvedOptions> {
  const options = await resolveRentalOptions(ctx.catalog, tenantId, request);
  const missing = missingOptions(options, provider.machineOptions);
  if (missing.length > 0) {
    throw new DomainError('CONFLICT', `provider ${provider.name} cannot carry out ${missing.join(', ')}; supported: see the node's supported_operations. Nothing was charged.`);
  }
  return options;
}

/** A spot rental's rate: the offer's spot price now (markup included, as nodes show it), never above the bid. */
function spotRate(quote: Quote, bidCentsPerGpuHour: Cents): Cents {
  const { provider } = quote.node;
  if (!isSpotMarket(provider)) throw new DomainError('CONFLICT', `provider ${provider.name} has no spot market; supported: see the node's supported_operations`);
  if (quote.spotRateCentsPerHour === null || quote.spotPerGpuCents === null) {
    throw new DomainError('CONFLICT', `node ${quote.offer.id} has no spot price now; search again with GET /v1/gpus (spot_price_per_gpu_hour_cents)`);
  }
  if (quote.spotPerGpuCents > bidCentsPerGpuHour) {
    throw new DomainError('CONFLICT', `node ${quote.offer.id} costs ${quote.spotPerGpuCents} cents per GPU-hour on its spot market now, above the bid of ${bidCentsPerGpuHour}`);
  }
  return quote.spotRateCentsPerHour;
}
