import { envCredentials, envInt, type ProviderModule } from '../provider-module.ts';
import { VastClient } from './client.ts';
import { VastProvider } from './adapter.ts';

export { VastProvider } from './adapter.ts';
export { EXTRA_FILTER_KEYS as VAST_EXTRA_FILTER_KEYS } from './mapping.ts';

export interface VastProviderConfig {
  apiKey: string;
  /** Default https://console.vast.ai (a trailing /api/v0 is accepted and dropped). */
  baseUrl?: string;
  /** Per attempt. Default 15 000 ms. */
  timeoutMs?: number;
  /** Extra attempts for reads, searches and deletes on 429 / 5xx / timeouts. Default 3. Creates are never retried. */
  retries?: number;
  /** First backoff step; it doubles per attempt (Vast sends no Retry-After). Default 1 000 ms. */
  backoffBaseMs?: number;
  /** Backoff ceiling; a Retry-After longer than this ends the retries. Default 30 000 ms. */
  backoffMaxMs?: number;
  /** Minimum spacing between offer searches (Vast: about 10 a minute). Default 6 000 ms. */
  searchIntervalMs?: number;
  /** Offers per search, cheapest first. Default 1 000. */
  searchLimit?: number;
  /** Disk allocated to each machine, in GB (Vast's minimum is 8); offer prices include it. Default 32. */
  diskGb?: number;
  /** List only offers from verified hosts. Default false: all hosts, with price_verified telling them apart. */
  verifiedOnly?: boolean;
  /** Image used when a create request names none. */
  defaultImage?: string;
}

const DEFAULT_BASE_URL = 'https://console.vast.ai';
const DEFAULT_IMAGE = 'nvidia/cuda:12.4.1-runtime-ubuntu22.04';

const positiveInt = (name: string, value: number, min = 1): number => {
  if (!Number.isInteger(value) || value < min) throw new Error(`vast provider: ${name} must be an integer >= ${min}, got ${value}`);
  return value;
};

export function createVastProvider(config: VastProviderConfig): VastProvider {
  if (typeof config.apiKey !== 'string' || config.apiKey.trim() === '') throw new Error('vast provider: apiKey is required');
  const baseUrl = (config.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '').replace(/\/api\/v[01]$/, '');
  try {
    new URL(baseUrl);
  } catch {
    throw new Error(`vast provider: baseUrl is not a URL: ${config.baseUrl}`);
  }
  const client = new VastClient({
    apiKey: config.apiKey.trim(),
    baseUrl,
    timeoutMs: positiveInt('timeoutMs', config.timeoutMs ?? 15_000),
    retries: positiveInt('retries', config.retries ?? 3, 0),
    backoffBaseMs: positiveInt('backoffBaseMs', config.backoffBaseMs ?? 1_000, 0),
    backoffMaxMs: positiveInt('backoffMaxMs', config.backoffMaxMs ?? 30_000, 0),
    searchIntervalMs: positiveInt('searchIntervalMs', config.searchIntervalMs ?? 6_000, 0),
  });
  return new VastProvider(client, {
    search: {
      limit: positiveInt('searchLimit', config.searchLimit ?? 1_000),
      diskGb: positiveInt('diskGb', config.diskGb ?? 32, 8),
      verifiedOnly: config.verifiedOnly ?? false,
    },
    create: {
      diskGb: config.diskGb ?? 32,
      defaultImage: config.defaultImage ?? DEFAULT_IMAGE,
    },
  });
}

export const vastModule: ProviderModule<VastProviderConfig> = {
  name: 'vast',
  real: true,
  // a Vast machine is a container the SSH login enters as root
  sshUser: 'root',
  configuration: [{ names: ['VAST_API_KEY'], default: 'unset', meaning: 'enables Vast.ai (`VAST_BASE_URL`, `VAST_DISK_GB` 32 optional)' }],
  fromEnv(env) {
    const credentials = envCredentials(env, 'VAST', 'Vast.ai');
    return credentials && { ...credentials, diskGb: envInt(env, 'VAST_DISK_GB', 32, 8, 10_000) };
  },
  create: (config) => createVastProvider(config),
};
