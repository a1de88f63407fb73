import type { HyperstackProviderConfig } from '../../../adapters/providers/hyperstack/index.ts';
import type { FakeHyperstack } from './server.ts';

/** The adapter pointed at the fake with fast settings: no pacing, tiny backoff, a short wait for machines being created. */
export const fastHyperstackConfig = (fake: FakeHyperstack, overrides: Partial<HyperstackProviderConfig> = {}): HyperstackProviderConfig => ({
  apiKey: fake.state.apiKey,
  baseUrl: fake.url,
  timeoutMs: 2_000,
  retries: 3,
  retryBaseMs: 1,
  retryMaxMs: 5,
  minIntervalMs: 0,
  deleteWaitMs: 2_000,
  deletePollMs: 10,
  ...overrides,
});
