import { envCredentials, type ProviderModule, type ProviderRuntime } from '../provider-module.ts';
import { ShadeformProvider } from './adapter.ts';
import { ShadeformClient } from './client.ts';

export interface ShadeformProviderConfig {
  apiKey: string;
  /** Including the version prefix; default https://api.shadeform.ai/v1. */
  baseUrl?: string;
  /** Per request, default 30 000 ms. */
  timeoutMs?: number;
  /** Extra attempts for safe calls on 429/5xx/lost answers, default 3. Creates are never retried. */
  retries?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Spacing between two requests, default 250 ms (Shadeform publishes no limit). */
  minIntervalMs?: number;
  /**
   * Underlying clouds whose machines are left out, in our provider names or Shadeform's own;
   * default: the providers this control plane enables directly. Empty: none left out.
   */
  cloudsExclude?: readonly string[];
}

export type { ShadeformProvider } from './adapter.ts';
export { ShadeformApiError, ShadeformTransportError } from './client.ts';

/** What the control plane tells a reseller: which clouds it reaches directly, and our names for Shadeform's. */
export type ShadeformRuntime = Pick<ProviderRuntime, 'enabledProviders' | 'providerNamed'>;

const ALONE: ShadeformRuntime = { enabledProviders: [], providerNamed: (name) => name };

export function createShadeformProvider(config: ShadeformProviderConfig, runtime: ShadeformRuntime = ALONE): ShadeformProvider {
  if (!config.apiKey) throw new Error('shadeform: apiKey is required');
  const client = new ShadeformClient({
    apiKey: config.apiKey,
    baseUrl: config.baseUrl ?? 'https://api.shadeform.ai/v1',
    timeoutMs: config.timeoutMs ?? 30_000,
    retries: config.retries ?? 3,
    retryBaseMs: config.retryBaseMs ?? 1_000,
    retryMaxMs: config.retryMaxMs ?? 15_000,
    minIntervalMs: config.minIntervalMs ?? 250,
  });
  const excluded = new Set((config.cloudsExclude ?? runtime.enabledProviders).map((name) => runtime.providerNamed(name)));
  excluded.delete('shadeform');
  return new ShadeformProvider(client, { providerNamed: runtime.providerNamed, excluded });
}

export const shadeformModule: ProviderModule<ShadeformProviderConfig> = {
  name: 'shadeform',
  real: true,
  // the usual login of its machines; each machine states its own (ssh_user), which an instance shows instead
  sshUser: 'shadeform',
  configuration: [
    {
      names: ['SHADEFORM_API_KEY'],
      default: 'unset',
      meaning:
        'enables Shadeform, a reseller of other clouds (`SHADEFORM_BASE_URL` optional, with its `/v1`; `SHADEFORM_CLOUDS_EXCLUDE`: its clouds left out, comma-separated, default the clouds enabled directly, `none` for none)',
    },
  ],
  fromEnv(env) {
    const credentials = envCredentials(env, 'SHADEFORM', 'Shadeform');
    const exclude = env.SHADEFORM_CLOUDS_EXCLUDE?.trim();
    if (!credentials) return null;
    if (!exclude) return credentials;
    const cloudsExclude = exclude.toLowerCase() === 'none' ? [] : exclude.split(',').map((name) => name.trim().toLowerCase()).filter(Boolean);
    if (!cloudsExclude.every((name) => /^[a-z0-9]+$/.test(name))) throw new Error(`SHADEFORM_CLOUDS_EXCLUDE: cloud names separated by commas, got "${exclude}"`);
    return { ...credentials, cloudsExclude };
  },
  create: (config, runtime) => createShadeformProvider(config, runtime),
};
