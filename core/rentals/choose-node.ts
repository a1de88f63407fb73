import { DomainError, invalidInput, notFound } from '../errors.ts';
import type { PricedNode, Quote } from '../market/node-chooser.ts';
import { searchFilterOf } from '../market/search-terms.ts';
import type { Cents } from '../money.ts';
import { quotedRate, usableQuote, type RentalQuote } from '../quotes/quote.ts';
import type { Token } from '../tenancy/token.ts';
import type { RentalsContext } from './context.ts';
import type { RentRequest } from './rent-request.ts';
import { missingOptions, resolveRentalOptions, type ResolvedOptions } from './rental-options.ts';

/** What a rental rents: the request with its node (and a quote's hours) filled in, the node priced live, the quote it uses. */
export interface Target {
  request: RentRequest & { nodeId: string };
  quote: Quote;
  /** The on-demand rate it is rented at: the live one (for a quote, never above the quoted rate). */
  rate: Cents;
  held: RentalQuote | null;
}

/**
 * The node a rental is of (docs/decisions.md, "Rent by specification and quotes"): the node named; the cheapest
 * match of a search whose live price is verified and within its ceiling, the next candidates tried when one is
 * gone or dearer (at most MAX_NODES_TRIED), those whose provider cannot carry the rental's options passed over; a
 * quote's node at no more than its rate; or a template's cheapest match whose provider can carry them.
 * Exactly one of node_id, search and quote_id (422 naming them otherwise).
 */
export async function chooseTarget(ctx: RentalsContext, caller: Token, asked: RentRequest): Promise<Target> {
  const named = (['node_id', 'search', 'quote_id'] as const).filter((field) => (field === 'node_id' ? asked.nodeId : field === 'search' ? asked.search : asked.quoteId));
  if (named.length > 1) throw invalidInput(['body', named[1]!], `send exactly one of node_id, search and quote_id; this request sends ${named.join(' and ')}`);
  if (asked.quoteId) return byQuote(ctx, caller, asked, asked.quoteId);
  if (asked.search) {
    const filter = searchFilterOf(asked.search, ['body', 'search']);
    const ceiling = filter.maxPricePerGpuCents;
    // a node whose provider cannot carry the rental's options gives way to the next, as a gone one does
    const unfit = unfitFor(await resolveRentalOptions(ctx.catalog, caller.tenantId, asked));
    const { quote, tried, refusals } = await ctx.chooser.choose(filter, { verifiedOnly: true, unfit, ...(ceiling !== undefined && { maxPerGpuCents: ceiling }) });
    if (!quote) {
      const what = tried.length === 0 && refusals.length === 0 ? 'no node in the market matches it' : `tried ${tried.length}: ${refusals.join('; ')}`;
      throw new DomainError(
        'CONFLICT',
        `no node matching this search has a verified price${ceiling === undefined ? '' : ` at or under ${ceiling} cents per GPU-hour`} now (${what}); nothing was charged. Widen the search (GET /v1/gpus with the same filters shows what matches)`,
      );
    }
    // a recovery of a rental made by search is held to the search's ceiling rather than the first node's rate
    const recovery = asked.recovery && ceiling !== undefined ? { recovery: { ...asked.recovery, maxPricePerGpuCents: ceiling } } : {};
    return { request: { ...asked, nodeId: quote.node.id, ...recovery }, quote, rate: quote.rateCentsPerHour, held: null };
  }
  const nodeId = asked.nodeId ?? (await templateNode(ctx, caller.tenantId, asked));
  const quote = await ctx.chooser.quote(ctx.chooser.nodeOf(nodeId));
  if (!quote) throw new DomainError('CONFLICT', `node ${nodeId} is no longer available; search again with GET /v1/gpus`);
  return { request: { ...asked, nodeId }, quote, rate: quote.rateCentsPerHour, held: null };
}

/** A quote's node for its hours, at its price now when that is no more than quoted (PRICE_CHANGED otherwise). */
async function byQuote(ctx: RentalsContext, caller: Token, asked: RentRequest, quoteId: string): Promise<Target> {
  const held = await ctx.storage.read((uow) => uow.quotes.get(caller.tenantId, quoteId));
  if (!held) throw notFound(`quote ${quoteId}`);
  usableQuote(held, ctx.clock.now());
  if (asked.terminationHours !== null && asked.terminationHours !== held.terminationHours) {
    throw invalidInput(['body', 'termination_hours'], `quote ${quoteId} is for ${held.terminationHours ?? 'no'} termination_hours; leave it out (a quote's node and hours are what it rents)`);
  }
  const quote = await ctx.chooser.quote(ctx.chooser.nodeOf(held.nodeId, ['body', 'quote_id']));
  if (!quote) throw new DomainError('CONFLICT', `node ${held.nodeId} of quote ${quoteId} is no longer available; nothing was charged. Make a new quote`);
  const request = { ...asked, nodeId: held.nodeId, terminationHours: held.terminationHours, name: asked.name ?? held.name };
  return { request, quote, rate: quotedRate(held, quote.rateCentsPerHour), held };
}

/** A template's search, run like GET /v1/gpus: its cheapest node now whose provider can carry the rental's options. */
async function templateNode(ctx: RentalsContext, tenantId: string, asked: RentRequest): Promise<string> {
  const { templateId } = asked;
  if (!templateId) {
    throw invalidInput(['body', 'node_id'], 'required: a node id from GET /v1/gpus, a search (GET /v1/gpus filters) or a quote_id (POST /v1/quotes); or a template_id whose template has a search');
  }
  const template = await ctx.catalog.templateForRental(tenantId, templateId);
  if (Object.keys(template.search).length === 0) {
    throw new DomainError('INVALID_INPUT', `body.node_id: required: template ${templateId} has no search to choose a node by`, [{ loc: ['body', 'node_id'], msg: `required: template ${templateId} has no search` }]);
  }
  const unfit = unfitFor(await resolveRentalOptions(ctx.catalog, tenantId, asked));
  const ranked = await ctx.chooser.cheapest(searchFilterOf(template.search, ['template', 'search']), TEMPLATE_WINDOW);
  const cheapest = ranked.find((node) => unfit(node) === null);
  if (!cheapest) {
    const why = ranked.length === 0 ? '' : ` its provider ${unfit(ranked[0]!)}`;
    throw new DomainError('CONFLICT', `no node matches template ${templateId}'s search now${why ? ` that can carry this rental (${why.trim()})` : ''}; widen it, or rent a node_id from GET /v1/gpus`);
  }
  return cheapest.node.id;
}

/** Nodes a template's search looks through for one whose provider can carry the rental's options. */
const TEMPLATE_WINDOW = 50;

/** Why a node's provider cannot carry a rental's options (null: it can). */
const unfitFor = (options: ResolvedOptions) => (node: PricedNode): string | null => {
  const missing = missingOptions(options, node.node.provider.machineOptions);
  return missing.length === 0 ? null : `${node.node.provider.name} cannot carry out ${missing.join(', ')}`;
};
