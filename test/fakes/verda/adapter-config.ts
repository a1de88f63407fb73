import type { VerdaProviderConfig } from '../../../adapters/providers/verda/index.ts';
import type { FakeVerda } from './server.ts';

/** The adapter pointed at the fake with fast settings: no pacing, tiny backoff; a test overrides what it exercises. */
export const fastVerdaConfig = (fake: FakeVerda, overrides: Partial<VerdaProviderConfig> = {}): VerdaProviderConfig => ({
  clientId: fake.state.clientId,
  clientSecret: fake.state.clientSecret,
  baseUrl: fake.url,
  timeoutMs: 2_000,
  retries: 3,
  retryBaseMs: 1,
  retryMaxMs: 5,
  minIntervalMs: 0,
  ...overrides,
});
