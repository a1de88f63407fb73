import type { ErrorCode, FieldProblem } from '../../core/errors.ts';
import { DomainError } from '../../core/errors.ts';

/** The one place where a typed outcome becomes an HTTP status. */
const STATUS: Record<ErrorCode, number> = {
  INVALID_INPUT: 422,
  UNAUTHENTICATED: 401,
  BOOTSTRAP_SECRET_INVALID: 401,
  OPERATOR_KEY_INVALID: 401,
  SCOPE_REQUIRED: 403,
  ROOT_REQUIRED: 403,
  MADE_BY_ANOTHER: 403,
  OWNER_REQUIRED: 403,
  TENANT_MANAGE_REQUIRED: 403,
  SCOPE_NOT_HELD: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PRICE_CHANGED: 409,
  SPEND_CAP_EXCEEDED: 402,
  BURN_CEILING_EXCEEDED: 402,
  INSUFFICIENT_FUNDS: 402,
  RENTALS_CLOSED: 503,
  MARKET_UNAVAILABLE: 503,
  UPSTREAM_UNAVAILABLE: 503,
  DATABASE_UNAVAILABLE: 503,
  WEBHOOK_INVALID: 400,
  RATE_LIMITED: 429,
  INVALID_CREDENTIALS: 401,
};

/** Codes a client tells apart from others of their status by the body's `code` (a 409 PRICE_CHANGED: quote again). */
const CODED: ReadonlySet<ErrorCode> = new Set(['PRICE_CHANGED']);

export interface HttpError {
  status: number;
  body: { detail: string; code?: ErrorCode; errors?: FieldProblem[] };
}

export function toHttpError(error: DomainError): HttpError {
  const status = STATUS[error.code];
  if (status === 422) return { status, body: { detail: error.message, errors: error.problems } };
  return { status, body: { detail: error.message, ...(CODED.has(error.code) && { code: error.code }) } };
}

export const isDomainError = (error: unknown): error is DomainError => error instanceof DomainError;
