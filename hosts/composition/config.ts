import { z } from 'zod';
import type { ProviderSetting } from '../../adapters/providers/provider-module.ts';
import { PROVIDER_MODULES } from '../../adapters/providers/registry.ts';
import type { StorageTarget } from '../../adapters/storage/mikro-storage.ts';
import { unpaidRealCloudsMessage } from './unpaid-real-clouds.ts';
import { authFromEnv, type AuthConfig } from './auth.ts';
import { meteringFromEnv, type MeteringConfig } from './metering-config.ts';
import { parseSecretsKey, SECRETS_KEY_FORMAT } from '../../adapters/crypto/secrets-key.ts';

/** Typed configuration of a control plane, whoever builds it: environment variables or an embedding program. */
export interface ControlPlaneConfig {
  storage: StorageTarget;
  operatorKeys: string[];
  /** operatorPerMinute: per operator key, apart from the public budget (default 600). */
  rateLimits: { publicPerMinute: number; perTokenPerMinute: number; operatorPerMinute?: number };
  logLevel: string;
  /** How long an authenticated token is reused before its row is read again (default 5000 ms; 0: every time). */
  tokenCacheMs?: number;
  /** Redis shared by the replicas (rate-limit counters, revocations); without it each process keeps its own. */
  redis?: { url: string; prefix?: string };
  /** The upstream clouds to list and rent from. Default: the embedded simulated cloud alone. */
  providers?: ProviderSetting[];
  market?: MarketConfig;
  billing?: BillingConfig;
  /**
   * The card processor: Stripe, or the embedded manual one, whose checkout page credits pretend money. Unset means
   * the manual one while every enabled cloud is simulated; with a real cloud it must be named (`{ kind: 'manual' }`: a trial).
   */
  payments?: PaymentsConfig;
  /** Where this server is reached from outside (checkout pages, return addresses). Default http://localhost:8080. */
  publicUrl?: string;
  /** Where a payer lands after a checkout; `?checkout=success&session_id=…` is added. Default the public URL's root. */
  checkoutReturnUrl?: string;
  /** Sign-in: mail, the identity provider (built-in unless Cognito is set), GitHub's device flow. */
  auth?: AuthConfig;
  /** Metering's price list (METERED_PRICES); default: none besides the built-in volume storage. */
  metering?: MeteringConfig;
  /**
   * The 32-byte key that seals registry passwords (AES-256-GCM). Unset: the embedded database keeps one in its
   * directory (secrets.key); PostgreSQL then keeps no registry passwords (docs/decisions.md, Catalog).
   */
  secretsKey?: Uint8Array;
  /** GET /metrics: a bearer token accepted besides the operator keys; the sweep daemon's port for it (unset: none). */
  metrics?: MetricsConfig;
  /** Outbound webhooks: the delivery worker and where endpoints may point. */
  webhooks?: WebhooksConfig;
  /** Deadlines and parallelism of calls to the clouds. */
  upstream?: UpstreamConfig;
  /** What one tenant may hold at the providers in volumes (VOLUME_MAX_GB_PER_TENANT). Default 10,000 GB. */
  volumes?: { maxGbPerTenant?: number };
}

export interface UpstreamConfig {
  /** Longest a create (machine, spot machine, volume) is waited for (PROVIDER_CREATE_TIMEOUT_MS); at most and by default 60 000 ms. */
  createTimeoutMs?: number;
  /** Longest any other provider call is waited for (PROVIDER_CALL_TIMEOUT_MS); at most and by default 30 000 ms. */
  callTimeoutMs?: number;
  /** Longest POST /v1/instances waits for the create before answering 201 provisioning (RENT_TIMEOUT_MS); at most and by default 60 000 ms. */
  rentTimeoutMs?: number;
  /** Cloud calls at once per provider in reconcile, removals, breakers and stops (PROVIDER_CONCURRENCY). Default 4. */
  concurrency?: number;
  /** How long a create's lease lasts unless its process renews it (LAUNCH_LEASE_MS). Default 30 000 ms. */
  launchLeaseMs?: number;
}

export interface WebhooksConfig {
  /** WEBHOOKS_ALLOW_HTTP=true: http:// and loopback for localhost, 127.0.0.1 and ::1 (development). Default false: https:// to public addresses only. */
  allowHttp?: boolean;
  /** Run the delivery worker in this process. Default true. */
  delivery?: boolean;
  /** How often the worker looks for attempts due. Default 1000 ms. */
  pollMs?: number;
  /** Longest a POST to an endpoint may take (WEBHOOK_TIMEOUT_MS). Default 10 000 ms. */
  timeoutMs?: number;
  /** Endpoints a tenant may hold, deleted ones aside (WEBHOOK_MAX_ENDPOINTS_PER_TENANT). Default 20. */
  maxEndpointsPerTenant?: number;
  /** POSTs one worker (server or sweep daemon) has in flight at once (WEBHOOK_CONCURRENCY). Default 256. */
  concurrency?: number;
  /** Of those, the most for one tenant's endpoints (WEBHOOK_CONCURRENCY_PER_TENANT). Default 50. */
  concurrencyPerTenant?: number;
}

export interface MetricsConfig {
  token?: string;
  port?: number;
}

export type PaymentsConfig =
  | { kind: 'manual' }
  | { kind: 'stripe'; secretKey: string; webhookSecret: string; apiBase?: string };

export interface BillingConfig {
  /** Run the billing sweep every minute inside this process. Default true; the standalone daemon is the other way. */
  sweep?: boolean;
  /** The breaker trips when an account's machines cost more per hour than this; null: no limit. Default 100,000 (1,000 USD). */
  defaultMaxBurnCentsPerHour?: number | null;
  /** Auto-recharge payments allowed in any rolling 24 hours. Default 3. */
  maxPaymentsPer24h?: number;
  /** Real time one sweep pass may take (SWEEP_BUDGET_MS); at most 120 000 ms, default 50 000 (under the minute between passes). */
  passBudgetMs?: number;
}

export interface MarketConfig {
  /** Added to upstream prices once renting is open, in basis points. Default 0. */
  markupBps?: number;
  /** Default: true while every enabled cloud is simulated, false as soon as a real cloud is. */
  rentalsOpen?: boolean;
  /** Longest a provider's offer listing may take before it counts as failed. Default 10 000 ms. */
  providerTimeoutMs?: number;
  /** Refresh every provider's offers in the background (every 60 s). Default true. */
  backgroundRefresh?: boolean;
  /** How often each provider is listed (among all replicas). Default 60 000 ms (upstream search APIs are rate limited). */
  refreshIntervalMs?: number;
  /** Share snapshots through the database (one replica lists each provider). Default: on PostgreSQL. */
  sharedSnapshots?: boolean;
}

export interface ServerConfig extends ControlPlaneConfig {
  port: number;
  host: string;
  trustProxy: boolean | number;
  /** SHUTDOWN_GRACE_MS: after SIGTERM, how long requests in flight and a sweep pass may take to finish. */
  shutdownGraceMs: number;
}

const positiveInt = (fallback: number) => z.coerce.number().int().min(1).default(fallback);

const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().min(1).default('0.0.0.0'),
  DATABASE_URL: z
    .url()
    .refine((url) => /^postgres(ql)?:\/\//.test(url), 'must be a postgres:// or postgresql:// URL')
    .optional(),
  DATABASE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(5_000),
  DATA_DIR: z.string().min(1).default('./data'),
  OPERATOR_KEYS: z
    .string()
    .default('')
    .transform((text) => text.split(',').map((key) => key.trim()).filter(Boolean))
    .refine((keys) => keys.every((key) => key.length >= 16), 'each operator key must be at least 16 characters'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  RATE_LIMIT_PUBLIC_PER_MINUTE: positiveInt(30),
  RATE_LIMIT_PER_MINUTE: positiveInt(600),
  OPERATOR_RATE_LIMIT_PER_MINUTE: positiveInt(600),
  TOKEN_CACHE_SECONDS: z.coerce.number().int().min(0).max(60).default(5),
  REDIS_URL: z
    .url()
    .refine((url) => /^rediss?:\/\//.test(url), 'must be a redis:// or rediss:// URL')
    .optional(),
  REDIS_PREFIX: z.string().min(1).max(100).default('gcp:'),
  SWEEP: z.enum(['on', 'off']).default('on'),
  STRIPE_SECRET_KEY: z.string().regex(/^(sk|rk)_(test|live)_\w+$/, 'must be a Stripe secret key (sk_test_…, sk_live_…)').optional(),
  STRIPE_WEBHOOK_SECRET: z.string().regex(/^whsec_\w+$/, 'must be a Stripe webhook signing secret (whsec_…)').optional(),
  STRIPE_API_BASE: z.url().optional(),
  PAYMENTS: z.enum(['manual', 'stripe']).optional(),
  PUBLIC_URL: z.url().optional(),
  CHECKOUT_RETURN_URL: z.url().optional(),
  MAX_PAYMENTS_PER_24H: z.coerce.number().int().min(1).max(100).default(3),
  ACCOUNT_MAX_BURN_USD_PER_HOUR: z.coerce.number().int().min(1).max(10_000_000).default(1_000),
  MARKUP_BPS: z.coerce.number().int().min(0).max(100_000).default(0),
  MARKET_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  MARKET_REFRESH_SECONDS: z.coerce.number().int().min(1).max(3_600).default(60),
  RENTALS_OPEN: z.enum(['true', 'false']).optional(),
  // the message never repeats the value: it is a key
  SECRETS_KEY: z
    .string()
    .transform((text, ctx) => parseSecretsKey(text) ?? (ctx.addIssue({ code: 'custom', message: `must be ${SECRETS_KEY_FORMAT}` }), z.NEVER))
    .optional(),
  TRUST_PROXY: z
    .union([z.enum(['true', 'false']), z.coerce.number().int().min(0)])
    .default('false')
    .transform((value) => (value === 'true' ? true : value === 'false' ? false : value)),
  // a scraper's credential: long enough not to be guessed, never repeated in a message
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  WEBHOOKS_ALLOW_HTTP: z.enum(['true', 'false']).default('false'),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  VOLUME_MAX_GB_PER_TENANT: z.coerce.number().int().min(1).max(100_000_000).default(10_000),
  // the core's ceilings (core/upstream/call-deadlines.ts): configurable lower, never higher
  PROVIDER_CREATE_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(60_000).default(60_000),
  PROVIDER_CALL_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(30_000).default(30_000),
  RENT_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(60_000).default(60_000),
  PROVIDER_CONCURRENCY: z.coerce.number().int().min(1).max(32).default(4),
  LAUNCH_LEASE_MS: z.coerce.number().int().min(1_000).max(600_000).default(30_000),
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(600_000).default(30_000),
  SWEEP_BUDGET_MS: z.coerce.number().int().min(5_000).max(120_000).default(50_000),
  WEBHOOK_MAX_ENDPOINTS_PER_TENANT: z.coerce.number().int().min(1).max(100_000).default(20),
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(2).max(4_000).default(256),
  WEBHOOK_CONCURRENCY_PER_TENANT: z.coerce.number().int().min(1).max(4_000).default(50),
});

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Reads the environment; a bad value stops the start with a message naming the variable. */
export function configFromEnv(env: Record<string, string | undefined> = process.env): ServerConfig {
  const result = EnvSchema.safeParse(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== '')));
  if (!result.success) {
    const lines = result.error.issues.map((issue) => `  ${issue.path.join('.') || '(environment)'}: ${issue.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = result.data;
  const providers: ProviderSetting[] = [];
  const realClouds: string[] = [];
  const problems: string[] = [];
  for (const module of PROVIDER_MODULES) {
    try {
      const config = module.fromEnv(env);
      if (config !== null) providers.push({ name: module.name, config });
      if (config !== null && module.real) realClouds.push(module.name);
    } catch (error) {
      problems.push(`  ${(error as Error).message}`);
    }
  }
  const stripeKeys = Boolean(e.STRIPE_SECRET_KEY) && Boolean(e.STRIPE_WEBHOOK_SECRET);
  if (Boolean(e.STRIPE_SECRET_KEY) !== Boolean(e.STRIPE_WEBHOOK_SECRET)) {
    problems.push('  STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET: set both to use Stripe, or neither for the embedded processor');
  } else if (e.PAYMENTS === 'stripe' && !stripeKeys) {
    problems.push('  PAYMENTS=stripe: set STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET too');
  }
  // the embedded processor's page credits pretend money: with a real cloud it must be asked for by name
  const paymentsKind = e.PAYMENTS ?? (stripeKeys ? 'stripe' : 'manual');
  if (paymentsKind === 'manual' && e.PAYMENTS === undefined && realClouds.length > 0) {
    problems.push(`  ${unpaidRealCloudsMessage(realClouds, 'environment')}`);
  }
  if (e.WEBHOOK_CONCURRENCY_PER_TENANT >= e.WEBHOOK_CONCURRENCY) {
    problems.push(`  WEBHOOK_CONCURRENCY_PER_TENANT (${e.WEBHOOK_CONCURRENCY_PER_TENANT}) must be less than WEBHOOK_CONCURRENCY (${e.WEBHOOK_CONCURRENCY}): one tenant's slow endpoints would fill the pool`);
  }
  const auth = authFromEnv(env, problems);
  const metering = meteringFromEnv(env, problems);
  if (problems.length > 0) throw new ConfigError(`invalid configuration:\n${problems.join('\n')}`);
  return {
    auth,
    metering,
    port: e.PORT,
    host: e.HOST,
    trustProxy: e.TRUST_PROXY,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    storage: e.DATABASE_URL ? { kind: 'postgres', url: e.DATABASE_URL, timeoutMs: e.DATABASE_TIMEOUT_MS } : { kind: 'pglite', dataDir: e.DATA_DIR },
    operatorKeys: e.OPERATOR_KEYS,
    rateLimits: { publicPerMinute: e.RATE_LIMIT_PUBLIC_PER_MINUTE, perTokenPerMinute: e.RATE_LIMIT_PER_MINUTE, operatorPerMinute: e.OPERATOR_RATE_LIMIT_PER_MINUTE },
    logLevel: e.LOG_LEVEL,
    tokenCacheMs: e.TOKEN_CACHE_SECONDS * 1000,
    metrics: { ...(e.METRICS_TOKEN && { token: e.METRICS_TOKEN }), ...(e.METRICS_PORT && { port: e.METRICS_PORT }) },
    ...(e.REDIS_URL && { redis: { url: e.REDIS_URL, prefix: e.REDIS_PREFIX } }),
    providers,
    billing: {
      sweep: e.SWEEP === 'on',
      defaultMaxBurnCentsPerHour: e.ACCOUNT_MAX_BURN_USD_PER_HOUR * 100,
      maxPaymentsPer24h: e.MAX_PAYMENTS_PER_24H,
      passBudgetMs: e.SWEEP_BUDGET_MS,
    },
    upstream: {
      createTimeoutMs: e.PROVIDER_CREATE_TIMEOUT_MS,
      callTimeoutMs: e.PROVIDER_CALL_TIMEOUT_MS,
      rentTimeoutMs: e.RENT_TIMEOUT_MS,
      concurrency: e.PROVIDER_CONCURRENCY,
      launchLeaseMs: e.LAUNCH_LEASE_MS,
    },
    payments:
      paymentsKind === 'stripe' && e.STRIPE_SECRET_KEY && e.STRIPE_WEBHOOK_SECRET
        ? { kind: 'stripe', secretKey: e.STRIPE_SECRET_KEY, webhookSecret: e.STRIPE_WEBHOOK_SECRET, ...(e.STRIPE_API_BASE && { apiBase: e.STRIPE_API_BASE }) }
        : { kind: 'manual' },
    publicUrl: e.PUBLIC_URL ?? `http://localhost:${e.PORT}`,
    ...(e.CHECKOUT_RETURN_URL && { checkoutReturnUrl: e.CHECKOUT_RETURN_URL }),
    ...(e.SECRETS_KEY && { secretsKey: e.SECRETS_KEY }),
    volumes: { maxGbPerTenant: e.VOLUME_MAX_GB_PER_TENANT },
    webhooks: {
      allowHttp: e.WEBHOOKS_ALLOW_HTTP === 'true',
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      maxEndpointsPerTenant: e.WEBHOOK_MAX_ENDPOINTS_PER_TENANT,
      concurrency: e.WEBHOOK_CONCURRENCY,
      concurrencyPerTenant: e.WEBHOOK_CONCURRENCY_PER_TENANT,
    },
    market: {
      markupBps: e.MARKUP_BPS,
      providerTimeoutMs: e.MARKET_TIMEOUT_MS,
      refreshIntervalMs: e.MARKET_REFRESH_SECONDS * 1000,
      ...(e.RENTALS_OPEN && { rentalsOpen: e.RENTALS_OPEN === 'true' }),
    },
  };
}
