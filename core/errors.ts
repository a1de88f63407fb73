/**
 * Expected outcomes of a use case. Each carries a stable `code`; every host (HTTP, MCP, CLI) has one
 * mapper from these codes to its own status. Anything that is not a DomainError is a bug or an outage.
 */
export const ERROR_CODES = [
  'INVALID_INPUT',
  'UNAUTHENTICATED',
  'BOOTSTRAP_SECRET_INVALID',
  'SCOPE_REQUIRED',
  'SCOPE_NOT_HELD',
  /** Only a root credential (an owner's or admin's session, or a token with every scope and no limit) may do this. */
  'ROOT_REQUIRED',
  /** A credential that is not root acts only on what its own subtree made. */
  'MADE_BY_ANOTHER',
  /** An owner's credentials are ended only by an owner (or a root token with no person above it), never by an admin's. */
  'OWNER_REQUIRED',
  /** Manage over the whole tenant (webhook endpoints, people), which a member's session and the tokens under it lack. */
  'TENANT_MANAGE_REQUIRED',
  'OPERATOR_KEY_INVALID',
  'NOT_FOUND',
  'CONFLICT',
  /** A quote's node costs more now than the quote said: nothing was charged; quote again. */
  'PRICE_CHANGED',
  'SPEND_CAP_EXCEEDED',
  'BURN_CEILING_EXCEEDED',
  'INSUFFICIENT_FUNDS',
  'RENTALS_CLOSED',
  'MARKET_UNAVAILABLE',
  'UPSTREAM_UNAVAILABLE',
  /** The database did not answer (down, restarting, frozen, its pool busy): try again (with the same idempotency key for a write). */
  'DATABASE_UNAVAILABLE',
  'WEBHOOK_INVALID',
  'RATE_LIMITED',
  'INVALID_CREDENTIALS',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** Where in the input a problem sits, for INVALID_INPUT: e.g. ['body', 'spend_limit_usd']. */
export interface FieldProblem {
  loc: (string | number)[];
  msg: string;
}

export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly problems: FieldProblem[];
  /** For RATE_LIMITED and DATABASE_UNAVAILABLE: when to try again (the HTTP host sends it as Retry-After). */
  readonly retryAfterSeconds: number | null;

  constructor(code: ErrorCode, message: string, problems: FieldProblem[] = [], retryAfterSeconds: number | null = null, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'DomainError';
    this.code = code;
    this.problems = problems;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** Too many attempts: try again in `seconds` (429 with Retry-After over HTTP). */
export const rateLimited = (what: string, seconds: number): DomainError =>
  new DomainError('RATE_LIMITED', `${what}; try again in ${Math.max(1, Math.ceil(seconds))} s`, [], Math.max(1, Math.ceil(seconds)));

export const invalidInput = (loc: (string | number)[], msg: string): DomainError =>
  new DomainError('INVALID_INPUT', `${loc.join('.')}: ${msg}`, [{ loc, msg }]);

export const notFound = (what: string): DomainError => new DomainError('NOT_FOUND', `${what} not found`);

/** The message of anything thrown, for a detail or a log line. */
export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** An upstream service (a cloud, the card processor) could not be reached: 503, with what to do next. */
export const upstreamUnavailable = (what: string, error: unknown, next: string): DomainError =>
  new DomainError('UPSTREAM_UNAVAILABLE', `${what}: ${messageOf(error)}; ${next}`);

/** How long a client should wait before trying again while the database does not answer. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * The database did not answer: 503 with Retry-After over HTTP. The message says nothing of the driver's own (it
 * names hosts and ports); `cause` keeps it for the log.
 */
export const databaseUnavailable = (cause: unknown): DomainError =>
  new DomainError(
    'DATABASE_UNAVAILABLE',
    `the database is unavailable; try again in ${DATABASE_RETRY_AFTER_SECONDS} s`,
    [],
    DATABASE_RETRY_AFTER_SECONDS,
    cause,
  );

export const isDatabaseUnavailable = (error: unknown): boolean => error instanceof DomainError && error.code === 'DATABASE_UNAVAILABLE';
