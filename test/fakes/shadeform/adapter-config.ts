import type { ShadeformProviderConfig } from '../../../adapters/providers/shadeform/index.ts';
import type { FakeShadeform } from './server.ts';

/** The adapter pointed at the fake with fast settings: no pacing, tiny backoff. */
export const fastShadeformConfig = (fake: FakeShadeform, overrides: Partial<ShadeformProviderConfig> = {}): ShadeformProviderConfig => ({
  apiKey: fake.state.apiKey,
  baseUrl: fake.url,
  timeoutMs: 2_000,
  retries: 3,
  retryBaseMs: 1,
  retryMaxMs: 5,
  minIntervalMs: 0,
  ...overrides,
});

/** What a launch script carries: the extra keys it appends, and the whole script. */
export const launchScriptOf = (launch: Record<string, unknown> | null): string | null => {
  const script = (launch?.script_configuration as { base64_script?: string } | undefined)?.base64_script;
  return script === undefined ? null : Buffer.from(script, 'base64').toString('utf8');
};

export const extraKeysOf = (script: string | null): string[] =>
  [...(script ?? '').matchAll(/^ {2}printf '%s\\n' '(.*)' >> /gm)].map((m) => m[1]!.replace(/'\\''/g, "'"));
