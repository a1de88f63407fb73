import { envCredentials, envUsdPrice, isUsdPrice, type ProviderModule } from '../provider-module.ts';
import { LambdaProvider } from './adapter.ts';
import { LambdaClient } from './client.ts';

export interface LambdaProviderConfig {
  apiKey: string;
  /** Default https://cloud.lambda.ai/api/v1 (the older cloud.lambdalabs.com host also answers). */
  baseUrl?: string;
  /** Per request, default 30 000 ms. */
  timeoutMs?: number;
  /** Extra attempts for safe calls on 429/5xx/lost answers, default 3. Launches are never retried. */
  retries?: number;
  /** First backoff delay, default 1 000 ms; doubles per attempt up to retryMaxMs (default 15 000). */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Spacing between any two requests, default 1 000 ms (Lambda allows about 1 request per second). */
  minIntervalMs?: number;
  /** Spacing between two launches, default 12 000 ms (Lambda allows 1 launch per 12 seconds). */
  launchIntervalMs?: number;
  /** An SSH key already registered on the account, used when a create carries no public key. */
  sshKeyName?: string;
  /** Filesystem price, exact decimal USD per GB-month (default 0.20, Lambda's published rate per GiB used). */
  volumePriceUsdPerGbMonth?: string;
}

export const LAMBDA_VOLUME_PRICE_USD_PER_GB_MONTH = '0.20';

export type { LambdaProvider } from './adapter.ts';
export { LAMBDA_ERROR_CODES, LambdaApiError, LambdaTransportError, type LambdaErrorCode } from './client.ts';

export function createLambdaProvider(config: LambdaProviderConfig): LambdaProvider {
  if (!config.apiKey) throw new Error('lambda: apiKey is required');
  const volumePrice = config.volumePriceUsdPerGbMonth ?? LAMBDA_VOLUME_PRICE_USD_PER_GB_MONTH;
  if (!isUsdPrice(volumePrice)) throw new Error(`lambda: volumePriceUsdPerGbMonth must be a decimal USD amount, got "${volumePrice}"`);
  const client = new LambdaClient({
    apiKey: config.apiKey,
    baseUrl: config.baseUrl ?? 'https://cloud.lambda.ai/api/v1',
    timeoutMs: config.timeoutMs ?? 30_000,
    retries: config.retries ?? 3,
    retryBaseMs: config.retryBaseMs ?? 1_000,
    retryMaxMs: config.retryMaxMs ?? 15_000,
    minIntervalMs: config.minIntervalMs ?? 1_000,
    launchIntervalMs: config.launchIntervalMs ?? 12_000,
  });
  return new LambdaProvider(client, { sshKeyName: config.sshKeyName ?? null, volumePriceUsdPerGbMonth: volumePrice });
}

export const lambdaModule: ProviderModule<LambdaProviderConfig> = {
  name: 'lambda',
  real: true,
  // an instance is a virtual machine on Lambda's Ubuntu image, whose login user is ubuntu
  sshUser: 'ubuntu',
  // as a reseller names it
  alsoKnownAs: ['lambdalabs'],
  configuration: [
    {
      names: ['LAMBDA_API_KEY'],
      default: 'unset',
      meaning: 'enables Lambda Cloud (`LAMBDA_BASE_URL`, `LAMBDA_SSH_KEY_NAME` optional; `LAMBDA_VOLUME_USD_PER_GB_MONTH` 0.20)',
    },
  ],
  fromEnv(env) {
    const credentials = envCredentials(env, 'LAMBDA', 'Lambda');
    const sshKeyName = env.LAMBDA_SSH_KEY_NAME?.trim();
    const volumePriceUsdPerGbMonth = envUsdPrice(env, 'LAMBDA_VOLUME_USD_PER_GB_MONTH');
    return credentials && { ...credentials, ...(sshKeyName && { sshKeyName }), ...(volumePriceUsdPerGbMonth && { volumePriceUsdPerGbMonth }) };
  },
  create: (config) => createLambdaProvider(config),
};
