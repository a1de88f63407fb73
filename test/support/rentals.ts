import { ManualClock } from '../../adapters/clock/manual-clock.ts';
import type { SandboxConfig } from '../../adapters/providers/sandbox/index.ts';
import { SandboxProvider } from '../../adapters/providers/sandbox/adapter.ts';
import type { Offer } from '../../core/market/offer.ts';
import { rateCentsPerHour } from '../../core/market/pricing.ts';
import type { Provider } from '../../core/ports/providers.ts';
import { OPERATOR_KEY, startApi, type ApiResponse, type TestApi } from './api.ts';
import type { ControlPlaneConfig } from '../../hosts/composition/config.ts';
import type { ControlPlaneOverrides } from '../../hosts/composition/control-plane.ts';
import type { Payments } from '../../core/ports/payments.ts';
import type { TestDatabase } from './database.ts';
import { FaultyProvider } from './faulty-provider.ts';

export const OPERATOR = { 'x-service-operator-key': OPERATOR_KEY };

export interface RentalWorld {
  api: TestApi;
  sandbox: SandboxProvider;
  /** The fault injector around the sandbox, when the world was made with `faulty`. */
  faults: FaultyProvider | null;
  clock: ManualClock;
  /** A tenant with a root token, funded by an operator credit of `usd`. */
  fundedTenant(usd: number | string): Promise<{ tenantId: string; token: string; tokenId: string }>;
  /** Rentable offers of the sandbox, cheapest first, with their rate in cents. */
  offers(filter?: (offer: Offer & { rate: number }) => boolean): Promise<(Offer & { rate: number })[]>;
  rent(token: string, body: Record<string, unknown>): Promise<ApiResponse<any>>;
  balance(token: string): Promise<{ balance_cents: number; owed_cents: number; available_cents: number }>;
  ledger(token: string): Promise<{ kind: string; amount_cents: number; balance_after_cents: number; reference: string | null }[]>;
  close(): Promise<void>;
}

/** The sandbox a control plane built from its configuration, on its database and its clock. */
export const sandboxOf = (api: TestApi): SandboxProvider => {
  const sandbox = api.plane.providers
    .map((provider) => (provider instanceof FaultyProvider ? provider.inner : provider))
    .find((provider) => provider instanceof SandboxProvider);
  if (!sandbox) throw new Error('this control plane has no sandbox');
  return sandbox as SandboxProvider;
};

/**
 * The API over a sandbox that runs on the test's clock, so machines come up as the clock moves. The
 * sandbox is built as a server builds it, from configuration: its machines live in the test's database.
 */
export async function rentalWorld(
  config: Partial<ControlPlaneConfig> = {},
  options: { sandbox?: SandboxConfig; faulty?: boolean; payments?: Payments; database?: TestDatabase; webhookResolver?: ControlPlaneOverrides['webhookResolver'] } = {},
): Promise<RentalWorld> {
  const clock = new ManualClock(new Date('2026-11-21T12:00:00.000Z'));
  let faults: FaultyProvider | null = null;
  const api = await startApi(
    { ...config, providers: [{ name: 'sandbox', config: { ...options.sandbox } }] },
    {
      clock,
      ...(options.faulty && { wrapProvider: (provider: Provider) => (faults = new FaultyProvider(provider)) }),
      ...(options.payments && { payments: options.payments }),
      ...(options.database && { database: options.database }),
      ...(options.webhookResolver && { webhookResolver: options.webhookResolver }),
    },
  );
  const sandbox = sandboxOf(api);
  const world: RentalWorld = {
    api,
    sandbox,
    faults,
    clock,
    async fundedTenant(usd) {
      const tenant = await api.newTenant();
      const credit = await api.call('POST', `/v1/operator/tenants/${tenant.tenantId}/credit`, { headers: OPERATOR, body: { amount_usd: usd, reason: 'test funds' } });
      if (credit.status !== 201) throw new Error(`credit failed: ${credit.status} ${JSON.stringify(credit.body)}`);
      return tenant;
    },
    async offers(filter: (offer: Offer & { rate: number }) => boolean = () => true) {
      const all = await sandbox.listOffers();
      return all
        .map((o) => ({ ...o, rate: rateCentsPerHour(o.priceUsdPerHour, 0) }))
        .filter((o) => o.available > 0 && filter(o))
        .sort((a, b) => a.rate - b.rate || a.id.localeCompare(b.id));
    },
    rent: (token, body) => api.call('POST', '/v1/instances', { token, body }),
    balance: async (token) => (await api.call('GET', '/v1/billing/balance', { token })).body,
    ledger: async (token) => (await api.call('GET', '/v1/billing/ledger', { token })).body,
    close: () => api.close(),
  };
  return world;
}
