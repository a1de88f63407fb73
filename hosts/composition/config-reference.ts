import { PROVIDER_MODULES } from '../../adapters/providers/registry.ts';
import { METERED_PRICES_EXAMPLE } from './metering-config.ts';

/**
 * Every environment variable the server and the sweep daemon read, with its default and what it does: the
 * source of docs/configuration.md (`npm run docs:generate`). test/unit/config-reference.test.ts holds it to
 * the configuration schema (config.ts): every variable the schema reads is here, and every one here is read.
 */
export interface ConfigVariable {
  /** The variables of one row: a setting and the ones that go with it. */
  names: readonly string[];
  default: string;
  /** Markdown. */
  meaning: string;
}

export const CONFIG_REFERENCE: readonly ConfigVariable[] = [
  {
    names: ["PORT", "HOST"],
    default: "`8080`, `0.0.0.0`",
    meaning: "where the HTTP server listens",
  },
  {
    names: ["DATABASE_URL"],
    default: "unset",
    meaning: "`postgres://\u2026`: use this PostgreSQL server instead of embedded PGlite",
  },
  {
    names: ["DATABASE_TIMEOUT_MS"],
    default: "`5000`",
    meaning: "with `DATABASE_URL`: longest a connection, a free pooled connection or one statement is waited for (100 to 600000). Past it the request answers 503 with `Retry-After: 5` (`the database is unavailable`), a sweep pass is skipped, and the connection is closed; raise it if one statement of yours legitimately runs longer (a sweep over very many machines). Migrations at start are not cut",
  },
  {
    names: ["DATA_DIR"],
    default: "`./data`",
    meaning: "the embedded PGlite database's directory (one process owns it)",
  },
  {
    names: ["OPERATOR_KEYS"],
    default: "empty",
    meaning: "comma-separated operator keys (each at least 16 characters), several for rotation",
  },
  {
    names: ["RATE_LIMIT_PUBLIC_PER_MINUTE"],
    default: "`30`",
    meaning: "requests a minute per client address on public routes and failed authentication",
  },
  {
    names: ["RATE_LIMIT_PER_MINUTE"],
    default: "`600`",
    meaning: "requests a minute per token",
  },
  {
    names: ["OPERATOR_RATE_LIMIT_PER_MINUTE"],
    default: "`600`",
    meaning: "requests a minute per operator key, with a valid key (a wrong or missing key counts against the public per-address limit)",
  },
  {
    names: ["TOKEN_CACHE_SECONDS"],
    default: "`5`",
    meaning: "how long an authenticated token is reused before its row is read again (0: never)",
  },
  {
    names: ["REDIS_URL"],
    default: "unset",
    meaning: "`redis://` or `rediss://`: Redis shared by the replicas, for rate-limit counters (one budget across replicas) and revocations (every replica drops a revoked token at once). Unset: each process counts and caches alone. Redis unreachable at run time (gone, or silent for 2 s): each replica counts its own budget, reads tokens from the database on every request (a revocation anywhere holds at once) and logs the error; no request fails for it; `GET /readyz` says `degraded`",
  },
  {
    names: ["REDIS_PREFIX"],
    default: "`gcp:`",
    meaning: "put before every Redis key and channel, so several deployments may share one Redis",
  },
  {
    names: ["MARKET_REFRESH_SECONDS"],
    default: "`60`",
    meaning: "how often each provider's offers are listed, among all replicas together (upstream search APIs are rate limited: lower it only for a simulated cloud or a fake)",
  },
  {
    names: ["TRUST_PROXY"],
    default: "`false`",
    meaning: "`true` or a hop count, when behind a load balancer (client address from X-Forwarded-For)",
  },
  {
    names: ["LOG_LEVEL"],
    default: "`info`",
    meaning: "pino level, or `silent`",
  },
  // each provider's own rows, from its module, in registry order
  ...PROVIDER_MODULES.flatMap((module) => module.configuration),
  {
    names: ["RENTALS_OPEN"],
    default: "`true` while only simulated clouds are enabled, `false` once a real cloud is",
    meaning: "whether renting is open",
  },
  {
    names: ["MARKUP_BPS"],
    default: "`0`",
    meaning: "basis points added to upstream prices once renting is open",
  },
  {
    names: ["MARKET_TIMEOUT_MS"],
    default: "`10000`",
    meaning: "longest one provider's offer listing may take before it counts as failed",
  },
  {
    names: ["SWEEP"],
    default: "`on`",
    meaning: "run the billing sweep every minute inside the server (`off` when `npm run sweep` runs it); every server and daemon running it takes a share of the due reservation and spot claim starts",
  },
  {
    names: ["SWEEP_BUDGET_MS"],
    default: "`50000`",
    meaning: "real time one sweep pass may take (5000 to 120000): past it no further start is taken and no further cloud clean-up begun, they wait for the next pass; starts in flight finish by themselves. Keep it under a minute so a pass never makes the next one skip",
  },
  {
    names: ["SHUTDOWN_GRACE_MS"],
    default: "`30000`",
    meaning: "after SIGTERM or SIGINT (server and sweep daemon): no new connection is taken, and requests in flight, a sweep pass's money step and webhook POSTs in flight get this long to finish (longer than a create's spacing at the slowest cloud); then open connections are closed and the process exits 0 once the database is closed (exit 1 if that has not happened 5 s later). Webhook deliveries not yet sent stay in the outbox for the next process. A second signal exits 1 at once; what was committed stays committed",
  },
  {
    names: ["PROVIDER_CREATE_TIMEOUT_MS"],
    default: "`60000`",
    meaning: "longest the control plane waits for a cloud to answer a create (machine, spot machine, volume), at most 60000: past it the create counts as ambiguous, the instance stays `provisioning` and the sweep's reconciler adopts its machine by label or fails and refunds it",
  },
  {
    names: ["PROVIDER_CALL_TIMEOUT_MS"],
    default: "`30000`",
    meaning: "longest it waits for any other cloud call (terminate, get, list, reboot, volumes, offers), at most 30000: past it the call counts as failed and the next pass tries again",
  },
  {
    names: ["RENT_TIMEOUT_MS"],
    default: "`60000`",
    meaning: "longest `POST /v1/instances` (and a reservation or spot claim start) waits for the create, at most 60000: past it the answer is 201 with the instance `provisioning`, the first hour charged, while the create goes on",
  },
  {
    names: ["LAUNCH_LEASE_MS"],
    default: "`30000`",
    meaning: "how long a create in flight stays its process's unless renewed (every third of it), 1000 to 600000: a create whose process died is failed and refunded by the first sweep pass past its lease, not at the provisioning deadline",
  },
  {
    names: ["PROVIDER_CONCURRENCY"],
    default: "`4`",
    meaning: "cloud calls at once per provider (1 to 32) in the sweep's reconcile and removals, and when breakers, emergency stops and holds stop an account's machines",
  },
  {
    names: ["ACCOUNT_MAX_BURN_USD_PER_HOUR"],
    default: "`1000`",
    meaning: "runaway protection: an account whose machines cost more an hour trips its breaker",
  },
  {
    names: ["STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET"],
    default: "unset",
    meaning: "both set: card payments through Stripe; unset: the embedded processor (a local page, no money moves)",
  },
  {
    names: ["STRIPE_API_BASE"],
    default: "unset",
    meaning: "where the Stripe API is reached (a proxy or a test double); unset: Stripe's own address",
  },
  {
    names: ["PAYMENTS"],
    default: "`stripe` when its keys are set, else `manual`",
    meaning: "the card processor. With a real cloud enabled and no Stripe keys the server refuses to start unless `PAYMENTS=manual` says so: the embedded processor's page credits pretend money, so `manual` beside a real cloud is for trials only. `stripe` needs both Stripe keys",
  },
  {
    names: ["PUBLIC_URL"],
    default: "`http://localhost:$PORT`",
    meaning: "where this server is reached (checkout pages, return addresses)",
  },
  {
    names: ["CHECKOUT_RETURN_URL"],
    default: "`PUBLIC_URL` + `/`",
    meaning: "where a payer lands after a checkout (`?checkout=success&session_id=\u2026` added)",
  },
  {
    names: ["MAX_PAYMENTS_PER_24H"],
    default: "`3`",
    meaning: "auto-recharge payments allowed in any rolling 24 hours",
  },
  {
    names: ["METERED_PRICES"],
    default: "empty",
    meaning: `what \`POST /v1/metering/usage\` accepts: JSON of kind -> \`{"unit", "usd_per_unit"}\`, e.g. \`${METERED_PRICES_EXAMPLE}\`; kinds \`[a-z][a-z0-9_]{0,63}\`, prices exact decimals > 0, at most 1000 and 6 decimals. \`volume_storage\` (per GB-hour, at each volume's price) is built in`,
  },
  {
    names: ["SMTP_URL", "MAIL_FROM"],
    default: "unset, `gpu-control-plane <no-reply@localhost>`",
    meaning: "where sign-up codes and invitations are sent (`smtp://` or `smtps://`); unset: written to the log",
  },
  {
    names: ["AUTH_REDIRECT_URIS"],
    default: "empty",
    meaning: "comma-separated redirect URIs the hosted sign-in page may send codes to, besides this origin and loopback",
  },
  {
    names: ["GITHUB_CLIENT_ID"],
    default: "unset",
    meaning: "enables sign-in with GitHub's device flow (`GITHUB_URL`, `GITHUB_API_URL` optional)",
  },
  {
    names: ["COGNITO_REGION", "COGNITO_USER_POOL_ID", "COGNITO_CLIENT_ID"],
    default: "unset",
    meaning: "all three: Amazon Cognito replaces the built-in identity provider (`COGNITO_CLIENT_SECRET`, `COGNITO_DOMAIN` optional)",
  },
  {
    names: ["METRICS_TOKEN"],
    default: "unset",
    meaning: "a bearer token (at least 16 characters) that may read `GET /metrics` besides the operator keys: give it to the scraper, not an operator key",
  },
  {
    names: ["METRICS_PORT"],
    default: "unset",
    meaning: "the sweep daemon (`npm run sweep`) serves `GET /metrics` on this port (same credentials); the server serves it on `PORT`",
  },
  {
    names: ["SECRETS_KEY"],
    default: "unset",
    meaning: "32 random bytes (64 hex digits or base64: `openssl rand -base64 32`) that encrypt saved registry passwords (AES-256-GCM). Unset: the embedded database makes one in `DATA_DIR/secrets.key` (mode 0600) and keeps it; with `DATABASE_URL`, registry passwords are refused (422) until it is set. Back it up apart from the database (a dump without the key keeps the passwords sealed); a start whose key does not open the saved passwords is refused. The sweep daemon takes the same value",
  },
  {
    names: ["WEBHOOKS_ALLOW_HTTP"],
    default: "`false`",
    meaning: "`true` lets webhook endpoints be `http://` and on this machine, for `localhost`, `127.0.0.1` and `::1` only (development); every other private, loopback or link-local address stays refused",
  },
  {
    names: ["WEBHOOK_TIMEOUT_MS"],
    default: "`10000`",
    meaning: "longest one webhook POST may take (connection to the end of the answer)",
  },
  {
    names: ["WEBHOOK_MAX_ENDPOINTS_PER_TENANT"],
    default: "`20`",
    meaning: "webhook endpoints one tenant may have (disabled ones count, deleted ones do not); past it `POST /v1/webhook-endpoints` answers 409 naming this variable",
  },
  {
    names: ["WEBHOOK_CONCURRENCY"],
    default: "`256`",
    meaning: "webhook POSTs one delivery worker (each server and sweep daemon) sends at once",
  },
  {
    names: ["WEBHOOK_CONCURRENCY_PER_TENANT"],
    default: "`50`",
    meaning: "of those, the most one tenant's endpoints may hold, so one tenant's slow endpoints never delay another's events; must be below `WEBHOOK_CONCURRENCY`",
  },
  {
    names: ["VOLUME_MAX_GB_PER_TENANT"],
    default: "`10000`",
    meaning: "the GB one tenant's volumes may hold at the providers (creating, available or attached); a create past it answers 409 naming this variable",
  },
];
