import { DomainError, invalidInput } from '../errors.ts';
import type { Quote } from '../market/node-chooser.ts';
import { requireRentalsOpen } from '../market/rentals-open.ts';
import { searchFilterOf } from '../market/search-terms.ts';
import type { Cents } from '../money.ts';
import { isSpotMarket } from '../ports/providers.ts';
import { requestDigest } from '../spending/idempotency.ts';
import type { Token } from '../tenancy/token.ts';
import { commitRental } from './commit-rental.ts';
import type { RentalsContext } from './context.ts';
import { answeredBy, launch, upstreamBidUsd } from './launch.ts';
import type { Adoption, Rented, RentRequest } from './rent-request.ts';
import { missingOptions, resolveRentalOptions } from './rental-options.ts';
import { madeMeanwhile, replay } from './replay.ts';

/**
 * Rents a node (docs/decisions.md, "One node chooser", "One spend gate"). The order of work: an earlier request with
 * the key answered as it was, renting open, the node's price checked live upstream, the options resolved, then one
 * transaction that locks the account and the token chain, passes the spend gate, inserts the instance and charges
 * the first hour (commit-rental.ts); only then the provider is called, with our instance id as its label
 * (launch.ts), and the answer waits for it at most `answerWithinMs`.
 */
export async function rent(ctx: RentalsContext, caller: Token, asked: RentRequest, adoption?: Adoption): Promise<Rented> {
  const answerBy = performance.now() + ctx.settings.answerWithinMs;
  const request = { ...asked, nodeId: asked.nodeId ?? (await templateNode(ctx, caller.tenantId, asked.templateId)) };
  const digest = requestDigest(ctx.secrets, request);
  if (request.idempotencyKey) {
    const earlier = await ctx.storage.read((uow) => uow.instances.byIdempotencyKey(caller.tenantId, request.idempotencyKey!));
    if (earlier) return replay(ctx, earlier, digest);
  }
  requireRentalsOpen(ctx.market.settings, 'Nothing was charged.');
  const node = ctx.chooser.nodeOf(request.nodeId);
  let quote: Quote | null;
  try {
    quote = await ctx.chooser.quote(node);
  } catch (error) {
    const made = await madeMeanwhile(ctx, caller, request.idempotencyKey, digest);
    if (made) return made;
    throw error;
  }
  if (!quote) {
    const made = await madeMeanwhile(ctx, caller, request.idempotencyKey, digest);
    if (made) return made;
    throw new DomainError('CONFLICT', `node ${request.nodeId} is no longer available; search again with GET /v1/gpus`);
  }
  const spot = adoption?.spot ?? null;
  const rate = spot ? spotRate(quote, spot.bidCentsPerGpuHour) : quote.rateCentsPerHour;
  const options = await resolveRentalOptions(ctx.catalog, caller.tenantId, request);
  const missing = missingOptions(options, node.provider.machineOptions);
  if (missing.length > 0) {
    throw new DomainError('CONFLICT', `provider ${node.provider.name} cannot carry out ${missing.join(', ')}; supported: see the node's supported_operations. Nothing was charged.`);
  }

  const created = await commitRental(ctx, caller, request, { quote, rate, digest, options }, adoption);
  if (created.replayed) return replay(ctx, created.instance, digest);
  ctx.metrics.rentalCreated(node.provider.name);
  const bid = spot ? upstreamBidUsd(spot.bidCentsPerGpuHour * created.instance.gpuCount, ctx.market.settings.markupBps) : null;
  const launching = launch(ctx, node.provider, created.instance, { ...options.setup, volumeIds: created.upstreamVolumeIds ?? [] }, bid);
  const settled = launching.then(
    () => undefined,
    () => undefined,
  );
  ctx.launching.set(created.instance.id, settled);
  void settled.then(() => ctx.launching.delete(created.instance.id));
  return { instance: await answeredBy(launching, answerBy, created.instance), replayed: false };
}

/** A template's search, run like GET /v1/gpus: its cheapest node now (a rental from a template without a node_id). */
async function templateNode(ctx: RentalsContext, tenantId: string, templateId: string | null): Promise<string> {
  if (!templateId) throw invalidInput(['body', 'node_id'], 'required: a node id from GET /v1/gpus (or a template_id whose template has a search)');
  const template = await ctx.catalog.templateForRental(tenantId, templateId);
  if (Object.keys(template.search).length === 0) {
    throw new DomainError('INVALID_INPUT', `body.node_id: required: template ${templateId} has no search to choose a node by`, [{ loc: ['body', 'node_id'], msg: `required: template ${templateId} has no search` }]);
  }
  const [cheapest] = await ctx.chooser.cheapest(searchFilterOf(template.search, ['template', 'search']), 1);
  if (!cheapest) throw new DomainError('CONFLICT', `no node matches template ${templateId}'s search now; widen it, or rent a node_id from GET /v1/gpus`);
  return cheapest.node.id;
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
