import { describe, expect, it } from 'vitest';
import { ConfigError, configFromEnv } from '../../hosts/composition/config.ts';
import { createControlPlane } from '../../hosts/composition/control-plane.ts';
import { createRunpodProvider } from '../../adapters/providers/runpod/index.ts';

describe('configuration from the environment', () => {
  it('runs on embedded defaults with nothing set', () => {
    const config = configFromEnv({});
    expect(config).toMatchObject({
      port: 8080,
      storage: { kind: 'pglite', dataDir: './data' },
      operatorKeys: [],
      rateLimits: { publicPerMinute: 30, perTokenPerMinute: 600 },
      logLevel: 'info',
      providers: [{ name: 'sandbox', config: { seed: 2026, offers: 300, latencyMs: 0 } }],
      market: { markupBps: 0, providerTimeoutMs: 10_000 },
    });
    expect(config.market).not.toHaveProperty('rentalsOpen'); // decided from the providers
  });

  it('bounds every cloud call and the sweep pass: the ceilings by default, lower when set', () => {
    expect(configFromEnv({})).toMatchObject({
      upstream: { createTimeoutMs: 60_000, callTimeoutMs: 30_000, rentTimeoutMs: 60_000, concurrency: 4 },
      billing: { passBudgetMs: 50_000 },
    });
    const lower = configFromEnv({ PROVIDER_CREATE_TIMEOUT_MS: '20000', PROVIDER_CALL_TIMEOUT_MS: '5000', RENT_TIMEOUT_MS: '15000', PROVIDER_CONCURRENCY: '8', SWEEP_BUDGET_MS: '120000' });
    expect(lower).toMatchObject({ upstream: { createTimeoutMs: 20_000, callTimeoutMs: 5_000, rentTimeoutMs: 15_000, concurrency: 8 }, billing: { passBudgetMs: 120_000 } });
  });

  it('uses Stripe when both of its secrets are set, the embedded processor otherwise', () => {
    expect(configFromEnv({}).payments).toEqual({ kind: 'manual' });
    expect(configFromEnv({ STRIPE_SECRET_KEY: 'sk_live_abc123', STRIPE_WEBHOOK_SECRET: 'whsec_def456' }).payments).toEqual({
      kind: 'stripe',
      secretKey: 'sk_live_abc123',
      webhookSecret: 'whsec_def456',
    });
    expect(() => configFromEnv({ STRIPE_SECRET_KEY: 'pk_live_abc', STRIPE_WEBHOOK_SECRET: 'whsec_def456' })).toThrow(/STRIPE_SECRET_KEY/);
  });

  it('chooses the card processor by PAYMENTS, else by the Stripe keys', () => {
    const stripe = { STRIPE_SECRET_KEY: 'sk_test_abc123', STRIPE_WEBHOOK_SECRET: 'whsec_def456' };
    expect(configFromEnv({ PAYMENTS: 'stripe', ...stripe }).payments).toMatchObject({ kind: 'stripe', secretKey: 'sk_test_abc123' });
    expect(configFromEnv({ PAYMENTS: 'manual', ...stripe }).payments).toEqual({ kind: 'manual' }); // named, it wins over the keys
    expect(configFromEnv({ PAYMENTS: 'manual' }).payments).toEqual({ kind: 'manual' });
    const keyless = () => configFromEnv({ PAYMENTS: 'stripe' });
    expect(keyless).toThrow(ConfigError);
    expect(keyless).toThrow(/PAYMENTS=stripe.*STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET/);
  });

  it.each([undefined, 'true', 'false'])('refuses the embedded processor unasked once a real cloud is on (RENTALS_OPEN %s)', (rentalsOpen) => {
    const env = { RUNPOD_API_KEY: 'runpod-key', ...(rentalsOpen && { RENTALS_OPEN: rentalsOpen }) };
    expect(() => configFromEnv(env)).toThrow(ConfigError);
    expect(() => configFromEnv(env)).toThrow(/STRIPE_SECRET_KEY.*PAYMENTS=manual/s);
    expect(() => configFromEnv(env)).toThrow(/runpod is enabled/);
    // a trial names the embedded processor; Stripe's keys need no PAYMENTS
    expect(configFromEnv({ ...env, PAYMENTS: 'manual' }).payments).toEqual({ kind: 'manual' });
    expect(configFromEnv({ ...env, STRIPE_SECRET_KEY: 'sk_live_abc123', STRIPE_WEBHOOK_SECRET: 'whsec_def456' }).payments).toMatchObject({ kind: 'stripe' });
  });

  it('enables each real cloud by its API key, and the sandbox can be turned off', () => {
    const config = configFromEnv({
      VAST_API_KEY: 'vast-key',
      RUNPOD_API_KEY: 'runpod-key',
      LAMBDA_API_KEY: 'lambda-key',
      LAMBDA_BASE_URL: 'http://127.0.0.1:9/api/v1',
      SANDBOX_ENABLED: 'false',
      MARKUP_BPS: '1500',
      RENTALS_OPEN: 'true',
      PAYMENTS: 'manual',
    });
    expect(config.providers).toEqual([
      { name: 'vast', config: { apiKey: 'vast-key', diskGb: 32 } },
      { name: 'runpod', config: { apiKey: 'runpod-key' } },
      { name: 'lambda', config: { apiKey: 'lambda-key', baseUrl: 'http://127.0.0.1:9/api/v1' } },
    ]);
    expect(config.market).toEqual({ markupBps: 1500, providerTimeoutMs: 10_000, refreshIntervalMs: 60_000, rentalsOpen: true });
  });

  it('uses PostgreSQL when DATABASE_URL is set, and several operator keys', () => {
    const config = configFromEnv({
      DATABASE_URL: 'postgres://u@db:5432/gcp',
      OPERATOR_KEYS: 'first-key-0123456789, second-key-0123456789',
      RATE_LIMIT_PER_MINUTE: '60',
    });
    expect(config.storage).toEqual({ kind: 'postgres', url: 'postgres://u@db:5432/gcp', timeoutMs: 5_000 });
    expect(configFromEnv({ DATABASE_URL: 'postgres://u@db:5432/gcp', DATABASE_TIMEOUT_MS: '1500' }).storage).toMatchObject({ timeoutMs: 1_500 });
    expect(() => configFromEnv({ DATABASE_TIMEOUT_MS: '50' })).toThrow(/DATABASE_TIMEOUT_MS/);
    expect(config.operatorKeys).toEqual(['first-key-0123456789', 'second-key-0123456789']);
    expect(config.rateLimits.perTokenPerMinute).toBe(60);
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://x@y/z'],
    ['DATABASE_URL', 'not a url'],
    ['OPERATOR_KEYS', 'short'],
    ['LOG_LEVEL', 'loud'],
    ['RATE_LIMIT_PUBLIC_PER_MINUTE', '0'],
    ['RATE_LIMIT_PER_MINUTE', '-1'],
    ['MARKUP_BPS', '-5'],
    ['MARKUP_BPS', '2.5'],
    ['MARKET_TIMEOUT_MS', '10'],
    ['RENTALS_OPEN', 'maybe'],
    ['SANDBOX_ENABLED', 'perhaps'],
    ['SANDBOX_OFFERS', '0'],
    ['SANDBOX_SEED', 'abc'],
    ['VAST_BASE_URL', 'ftp://vast'],
    ['LAMBDA_BASE_URL', 'not a url'],
    ['STRIPE_SECRET_KEY', 'sk_test_only_the_key'],
    ['STRIPE_WEBHOOK_SECRET', 'whsec_only_the_secret'],
    ['MAX_PAYMENTS_PER_24H', '0'],
    ['PAYMENTS', 'card'],
    ['PUBLIC_URL', 'gpus.example.com'],
    ['PROVIDER_CREATE_TIMEOUT_MS', '90000'],
    ['PROVIDER_CALL_TIMEOUT_MS', '45000'],
    ['RENT_TIMEOUT_MS', '61000'],
    ['PROVIDER_CONCURRENCY', '0'],
    ['SWEEP_BUDGET_MS', '180000'],
  ])('stops on a bad %s with a message naming it', (name, value) => {
    expect(() => configFromEnv({ [name]: value })).toThrow(ConfigError);
    expect(() => configFromEnv({ [name]: value })).toThrow(new RegExp(name));
  });
});

describe('webhook settings from the environment', () => {
  it('WEBHOOK_MAX_ENDPOINTS_PER_TENANT: 20 by default, a positive whole number when set', () => {
    expect(configFromEnv({}).webhooks).toMatchObject({ maxEndpointsPerTenant: 20 });
    expect(configFromEnv({ WEBHOOK_MAX_ENDPOINTS_PER_TENANT: '5' }).webhooks).toMatchObject({ maxEndpointsPerTenant: 5 });
    for (const value of ['0', '-1', '2.5', 'many', '100001']) {
      expect(() => configFromEnv({ WEBHOOK_MAX_ENDPOINTS_PER_TENANT: value }), value).toThrow(/WEBHOOK_MAX_ENDPOINTS_PER_TENANT/);
    }
  });

  it("WEBHOOK_CONCURRENCY and WEBHOOK_CONCURRENCY_PER_TENANT: 256 and 50 by default; a tenant's share must be less than the pool", () => {
    expect(configFromEnv({}).webhooks).toMatchObject({ concurrency: 256, concurrencyPerTenant: 50 });
    expect(configFromEnv({ WEBHOOK_CONCURRENCY: '32', WEBHOOK_CONCURRENCY_PER_TENANT: '4' }).webhooks).toMatchObject({ concurrency: 32, concurrencyPerTenant: 4 });
    expect(() => configFromEnv({ WEBHOOK_CONCURRENCY: '40' })).toThrow(/WEBHOOK_CONCURRENCY_PER_TENANT \(50\) must be less than WEBHOOK_CONCURRENCY \(40\)/);
    for (const [name, value] of [['WEBHOOK_CONCURRENCY', '1'], ['WEBHOOK_CONCURRENCY', 'lots'], ['WEBHOOK_CONCURRENCY_PER_TENANT', '0']]) {
      expect(() => configFromEnv({ [name!]: value }), `${name}=${value}`).toThrow(new RegExp(name!));
    }
  });
});

describe('an embedding program\'s configuration', () => {
  it('is refused, before any storage opens, when a real cloud would run beside the embedded processor unasked', async () => {
    // nothing listens on port 9: opening the storage would fail with another error
    const base = { storage: { kind: 'postgres' as const, url: 'postgres://nobody@127.0.0.1:9/none' }, operatorKeys: [], rateLimits: { publicPerMinute: 1, perTokenPerMinute: 1 }, logLevel: 'silent' };
    const fromConfig = createControlPlane({ ...base, providers: [{ name: 'vast', config: { apiKey: 'vast-key' } }] });
    await expect(fromConfig).rejects.toThrow(ConfigError);
    await expect(fromConfig).rejects.toThrow(/payments:.*vast is enabled.*STRIPE_SECRET_KEY.*PAYMENTS=manual/);
    const fromOverride = createControlPlane(base, { providers: [createRunpodProvider({ apiKey: 'runpod-key' })] });
    await expect(fromOverride).rejects.toThrow(/runpod is enabled/);
    // named, the embedded processor passes the check (and the start then fails only at the storage)
    await expect(createControlPlane({ ...base, providers: [{ name: 'vast', config: { apiKey: 'vast-key' } }], payments: { kind: 'manual' } })).rejects.not.toThrow(ConfigError);
  });
});
