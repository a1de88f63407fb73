import { envCredentials, envUsdPrice, isUsdPrice, type ProviderModule } from '../provider-module.ts';
import { HyperstackProvider } from './adapter.ts';
import { HyperstackClient } from './client.ts';

export interface HyperstackProviderConfig {
  apiKey: string;
  /** Including the version prefix; default https://infrahub-api.nexgencloud.com/v1. */
  baseUrl?: string;
  /** Per request, default 30 000 ms. */
  timeoutMs?: number;
  /** Extra attempts for safe calls on 429/5xx/lost answers, default 3. Creates are never retried. */
  retries?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Spacing between two requests, default 250 ms (Hyperstack publishes no limit). */
  minIntervalMs?: number;
  /** The OS image machines boot, default "Ubuntu Server 22.04 LTS R535 CUDA 12.2". */
  image?: string;
  /** The volume type volumes are made as, default Cloud-SSD. */
  volumeType?: string;
  /** Volume price, exact decimal USD per GB-month, default 0.06. */
  volumePriceUsdPerGbMonth?: string;
  /** How long a terminate waits for a machine still being created, default 20 000 ms; then the caller tries again later. */
  deleteWaitMs?: number;
  /** How often it looks meanwhile, default 2 000 ms. */
  deletePollMs?: number;
}

export const HYPERSTACK_VOLUME_PRICE_USD_PER_GB_MONTH = '0.06';

export type { HyperstackProvider } from './adapter.ts';
export { HyperstackApiError, HyperstackTransportError } from './client.ts';

export function createHyperstackProvider(config: HyperstackProviderConfig): HyperstackProvider {
  if (!config.apiKey) throw new Error('hyperstack: apiKey is required');
  const volumePrice = config.volumePriceUsdPerGbMonth ?? HYPERSTACK_VOLUME_PRICE_USD_PER_GB_MONTH;
  if (!isUsdPrice(volumePrice)) throw new Error(`hyperstack: volumePriceUsdPerGbMonth must be a decimal USD amount, got "${volumePrice}"`);
  const client = new HyperstackClient({
    apiKey: config.apiKey,
    baseUrl: config.baseUrl ?? 'https://infrahub-api.nexgencloud.com/v1',
    timeoutMs: config.timeoutMs ?? 30_000,
    retries: config.retries ?? 3,
    retryBaseMs: config.retryBaseMs ?? 1_000,
    retryMaxMs: config.retryMaxMs ?? 15_000,
    minIntervalMs: config.minIntervalMs ?? 250,
  });
  return new HyperstackProvider(client, {
    image: config.image ?? 'Ubuntu Server 22.04 LTS R535 CUDA 12.2',
    volumeType: config.volumeType ?? 'Cloud-SSD',
    volumePriceUsdPerGbMonth: volumePrice,
    deleteWaitMs: config.deleteWaitMs ?? 20_000,
    deletePollMs: config.deletePollMs ?? 2_000,
  });
}

export const hyperstackModule: ProviderModule<HyperstackProviderConfig> = {
  name: 'hyperstack',
  real: true,
  // a virtual machine on Hyperstack's Ubuntu images, whose login user is ubuntu
  sshUser: 'ubuntu',
  configuration: [
    {
      names: ['HYPERSTACK_API_KEY'],
      default: 'unset',
      meaning: 'enables Hyperstack, NexGen Cloud (`HYPERSTACK_BASE_URL` optional, with its `/v1`; `HYPERSTACK_IMAGE` Ubuntu Server 22.04 LTS R535 CUDA 12.2; `HYPERSTACK_VOLUME_USD_PER_GB_MONTH` 0.06)',
    },
  ],
  fromEnv(env) {
    const credentials = envCredentials(env, 'HYPERSTACK', 'Hyperstack');
    const image = env.HYPERSTACK_IMAGE?.trim();
    const volumePriceUsdPerGbMonth = envUsdPrice(env, 'HYPERSTACK_VOLUME_USD_PER_GB_MONTH');
    return credentials && { ...credentials, ...(image && { image }), ...(volumePriceUsdPerGbMonth && { volumePriceUsdPerGbMonth }) };
  },
  create: (config) => createHyperstackProvider(config),
};
