import { envCredentials, envUrl, envUsdPrice, isUsdPrice, type ProviderModule } from '../provider-module.ts';
import type { Dispatcher } from 'undici';
import { RunpodProvider } from './adapter.ts';
import { RunpodClient } from './client.ts';

export interface RunpodProviderConfig {
  apiKey: string;
  /** REST v2 lives under `<baseUrl>/v2`; default https://api.runpod.io. */
  baseUrl?: string;
  /** Default `<baseUrl>/graphql`. */
  graphqlUrl?: string;
  /** Deadline of one HTTP call. */
  timeoutMs?: number;
  /** Extra attempts for a call that may be retried. */
  retries?: number;
  backoffBaseMs?: number;
  /** Longest `Retry-After` worth waiting for inside one call. */
  maxRetryAfterMs?: number;
  /** Image for a create that names none. */
  defaultImage?: string;
  /** Container disk of every pod, in GB. */
  diskGb?: number;
  /** Network volume price, exact decimal USD per GB-month (default 0.07: RunPod's list price under 1 TB). */
  volumePriceUsdPerGbMonth?: string;
  dispatcher?: Dispatcher;
}

export const RUNPOD_DEFAULTS = {
  baseUrl: 'https://api.runpod.io',
  timeoutMs: 15_000,
  retries: 2,
  backoffBaseMs: 500,
  maxRetryAfterMs: 10_000,
  defaultImage: 'runpod/pytorch:1.0.2-cu1281-torch280-ubuntu2404',
  diskGb: 50,
  volumePriceUsdPerGbMonth: '0.07',
} as const;

export function createRunpodProvider(config: RunpodProviderConfig): RunpodProvider {
  if (!config.apiKey) throw new Error('runpod: an API key is required');
  const volumePrice = config.volumePriceUsdPerGbMonth ?? RUNPOD_DEFAULTS.volumePriceUsdPerGbMonth;
  if (!isUsdPrice(volumePrice)) throw new Error(`runpod: volumePriceUsdPerGbMonth must be a decimal USD amount, got "${volumePrice}"`);
  const baseUrl = (config.baseUrl ?? RUNPOD_DEFAULTS.baseUrl).replace(/\/+$/, '');
  const client = new RunpodClient({
    apiKey: config.apiKey,
    baseUrl,
    graphqlUrl: config.graphqlUrl ?? `${baseUrl}/graphql`,
    timeoutMs: config.timeoutMs ?? RUNPOD_DEFAULTS.timeoutMs,
    retries: config.retries ?? RUNPOD_DEFAULTS.retries,
    backoffBaseMs: config.backoffBaseMs ?? RUNPOD_DEFAULTS.backoffBaseMs,
    maxRetryAfterMs: config.maxRetryAfterMs ?? RUNPOD_DEFAULTS.maxRetryAfterMs,
    ...(config.dispatcher ? { dispatcher: config.dispatcher } : {}),
  });
  return new RunpodProvider(client, {
    defaultImage: config.defaultImage ?? RUNPOD_DEFAULTS.defaultImage,
    diskGb: config.diskGb ?? RUNPOD_DEFAULTS.diskGb,
    volumePriceUsdPerGbMonth: volumePrice,
  });
}

export { RunpodProvider } from './adapter.ts';

export const runpodModule: ProviderModule<RunpodProviderConfig> = {
  name: 'runpod',
  real: true,
  // a pod is a container the SSH login enters as root
  sshUser: 'root',
  configuration: [
    {
      names: ['RUNPOD_API_KEY'],
      default: 'unset',
      meaning: 'enables RunPod (`RUNPOD_BASE_URL`, `RUNPOD_GRAPHQL_URL` optional; `RUNPOD_VOLUME_USD_PER_GB_MONTH` 0.07)',
    },
  ],
  fromEnv(env) {
    const credentials = envCredentials(env, 'RUNPOD', 'RunPod');
    const graphqlUrl = envUrl(env, 'RUNPOD_GRAPHQL_URL');
    const volumePriceUsdPerGbMonth = envUsdPrice(env, 'RUNPOD_VOLUME_USD_PER_GB_MONTH');
    return credentials && { ...credentials, ...(graphqlUrl && { graphqlUrl }), ...(volumePriceUsdPerGbMonth && { volumePriceUsdPerGbMonth }) };
  },
  create: (config) => createRunpodProvider(config),
};
