import type { Model } from './model.ts';
import type { Tenant, Workload } from './workload.ts';

/** A spend cap and a burn ceiling the capped token's rentals meet now and then (its windows are 1 to 3 hours of nodes under 8 USD). */
const CAP_CENTS = 6_000;
const BURN_CEILING_CENTS = 1_500;

/**
 * The crash test's tenant: funds, a monthly budget (not stopping anything: its figure is what is checked), a capped
 * child token with a burn ceiling, a webhook endpoint at the test's receiver, and the upstream cloud's cheap nodes.
 */
export async function openTenant(work: Workload, model: Model, endpointUrl: string): Promise<Tenant> {
  const must = async (what: string, answer: Promise<{ status: number; body: any }>, status: number) => {
    const got = await answer;
    if (got.status !== status) throw new Error(`${what}: ${got.status} ${JSON.stringify(got.body)}`);
    return got.body;
  };
  const tenant = await must('tenant', work.call('POST', '/v1/tenants', { body: { name: 'crash' } }), 201);
  const root = await must(
    'root token',
    work.call('POST', '/v1/tokens', { body: { tenant_id: tenant.id, bootstrap_secret: tenant.bootstrap_secret, scopes: ['read', 'rent', 'manage', 'billing'] } }),
    201,
  );
  const token = root.token as string;
  await must('credit', work.operator('POST', `/v1/operator/tenants/${tenant.id}/credit`, { amount_usd: 5_000, reason: 'crash test funds' }), 201);
  model.creditedCents += 500_000;
  await must('budget', work.call('PUT', '/v1/billing/budget', { token, body: { monthly_usd: '900000.00', stop_at_limit: false } }), 200);
  const capped = await must(
    'capped token',
    work.call('POST', '/v1/tokens', { token, body: { name: 'capped agent', scopes: ['read', 'rent'], spend_limit_usd: CAP_CENTS / 100, max_burn_usd_per_hour: BURN_CEILING_CENTS / 100 } }),
    201,
  );
  model.capped = { id: capped.id, capCents: CAP_CENTS, burnCeilingCents: BURN_CEILING_CENTS };
  const endpoint = await must('webhook endpoint', work.call('POST', '/v1/webhook-endpoints', { token, body: { url: endpointUrl } }), 201);
  const listed = await must('nodes', work.call('GET', '/v1/gpus?limit=200&provider=runpod', { token }), 200);
  const nodes = (listed.nodes as { id: string; price_per_hour_cents: number }[]).filter((n) => n.price_per_hour_cents < 800).map((n) => n.id);
  if (nodes.length < 20) throw new Error(`too few cheap nodes upstream: ${nodes.length}`);
  return { id: tenant.id, token, cappedToken: capped.token, endpointId: endpoint.id, nodes };
}
