import { envUrl, type Env, type ProviderModule } from '../provider-module.ts';
import { VerdaProvider } from './adapter.ts';
import { VerdaClient } from './client.ts';

export interface VerdaProviderConfig {
  clientId: string;
  clientSecret: string;
  /** Including the version prefix; default https://api.verda.com/v1 (the older api.datacrunch.io/v1 also answers). */
  baseUrl?: string;
  /** Per request, default 30 000 ms. */
  timeoutMs?: number;
  /** Extra attempts for safe calls on 429/5xx/lost answers, default 3. Deploys are never retried. */
  retries?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Spacing between two requests, default 1 000 ms (Verda allows 60 a minute per method and path). */
  minIntervalMs?: number;
  /** Renew the bearer this long before its expires_in runs out (at most a tenth of its life), default 60 000 ms. */
  renewBeforeMs?: number;
  /** The OS image machines boot, default ubuntu-24.04-cuda-12.8-open-docker. */
  image?: string;
  /** The volume type volumes are made as, default NVMe_Shared. */
  volumeType?: string;
  /** The clock the bearer's life is counted on (a test's own); default Date.now. */
  now?: () => number;
}

export const VERDA_DEFAULT_IMAGE = 'ubuntu-24.04-cuda-12.8-open-docker';

export type { VerdaProvider } from './adapter.ts';
export { VerdaApiError, VerdaTransportError } from './client.ts';

export function createVerdaProvider(config: VerdaProviderConfig): VerdaProvider {
  if (!config.clientId || !config.clientSecret) throw new Error('verda: clientId and clientSecret are required');
  const client = new VerdaClient({
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    baseUrl: config.baseUrl ?? 'https://api.verda.com/v1',
    timeoutMs: config.timeoutMs ?? 30_000,
    retries: config.retries ?? 3,
    retryBaseMs: config.retryBaseMs ?? 1_000,
    retryMaxMs: config.retryMaxMs ?? 15_000,
    minIntervalMs: config.minIntervalMs ?? 1_000,
    renewBeforeMs: config.renewBeforeMs ?? 60_000,
    now: config.now ?? Date.now,
  });
  return new VerdaProvider(client, { image: config.image ?? VERDA_DEFAULT_IMAGE, volumeType: config.volumeType ?? 'NVMe_Shared' });
}

const text = (env: Env, name: string): string | undefined => env[name]?.trim() || undefined;

export const verdaModule: ProviderModule<VerdaProviderConfig> = {
  name: 'verda',
  real: true,
  // a virtual machine on Verda's Ubuntu images, whose login user is root
  sshUser: 'root',
  // its name before it was renamed, as a reseller still names it
  alsoKnownAs: ['datacrunch'],
  configuration: [
    {
      names: ['VERDA_CLIENT_ID', 'VERDA_CLIENT_SECRET'],
      default: 'unset',
      meaning: 'enables Verda, formerly DataCrunch (OAuth2 client credentials; `VERDA_BASE_URL` optional, with its `/v1`; `VERDA_IMAGE` ubuntu-24.04-cuda-12.8-open-docker)',
    },
  ],
  fromEnv(env) {
    const clientId = text(env, 'VERDA_CLIENT_ID');
    const clientSecret = text(env, 'VERDA_CLIENT_SECRET');
    const baseUrl = envUrl(env, 'VERDA_BASE_URL');
    const image = text(env, 'VERDA_IMAGE');
    if (!clientId || !clientSecret) {
      if (clientId || clientSecret || baseUrl) throw new Error('VERDA_CLIENT_ID and VERDA_CLIENT_SECRET: set both to enable Verda');
      return null;
    }
    return { clientId, clientSecret, ...(baseUrl && { baseUrl }), ...(image && { image }) };
  },
  create: (config) => createVerdaProvider(config),
};
