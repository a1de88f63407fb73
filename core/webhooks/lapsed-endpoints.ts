import type { UnitOfWork } from '../ports/storage.ts';
import type { WebhookEndpoint } from './endpoint.ts';
import { registrantLapse } from './registrant.ts';

/**
 * Why each of these endpoints may deliver no more, by endpoint id (those that may are absent), every registrant's chain
 * read in one statement (registrant.ts). Endpoints saved before registrants were kept (migration 0040) have none, and
 * stay as they are.
 */
export async function lapsesOf(uow: UnitOfWork, endpoints: readonly Pick<WebhookEndpoint, 'id' | 'tokenId'>[], now: Date): Promise<Map<string, string>> {
  const lapses = new Map<string, string>();
  const registrants = [...new Set(endpoints.flatMap((endpoint) => endpoint.tokenId ?? []))];
  if (registrants.length === 0) return lapses;
  const chains = await uow.tokens.chains(registrants);
  for (const endpoint of endpoints) {
    if (endpoint.tokenId === null) continue;
    const lapse = registrantLapse(chains.get(endpoint.tokenId) ?? [], now);
    if (lapse !== null) lapses.set(endpoint.id, lapse);
  }
  return lapses;
}

/**
 * Disables, in the caller's transaction, the tenant's endpoints whose registrant could no longer register them, each
 * with why (docs/decisions.md, "One tree of authority"): run wherever a node ends or narrows (end-subtree.ts,
 * narrow-subtree.ts, the idle and expiry steps of the sweep), after the change, so it reads the tree as it now is. A
 * tenant holds a few endpoints (WEBHOOK_MAX_ENDPOINTS_PER_TENANT), so all of them are judged. Answers the ids disabled.
 */
export async function disableLapsedEndpoints(uow: UnitOfWork, tenantId: string, now: Date): Promise<string[]> {
  const live = (await uow.webhooks.listEndpoints(tenantId)).filter((endpoint) => endpoint.disabledAt === null && endpoint.tokenId !== null);
  const disabled: string[] = [];
  for (const [endpointId, reason] of await lapsesOf(uow, live, now)) {
    if (await uow.webhooks.disable(endpointId, now, reason)) disabled.push(endpointId);
  }
  return disabled;
}
