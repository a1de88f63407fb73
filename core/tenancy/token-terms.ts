import { DomainError, invalidInput } from '../errors.ts';
import { formatUsd, type Cents } from '../money.ts';
import { DEFAULT_SCOPES, missingScopes, normaliseScopes, type Scope } from './scopes.ts';
import { maxBurnCentsPerHour, maxRentalHours, remainingCents, type Token } from './token.ts';

/** What a caller asks for when it issues a token; amounts already parsed to cents. */
export interface TokenRequest {
  name?: string | null;
  scopes?: Scope[];
  spendLimitCents?: Cents;
  maxRentalHours?: number;
  maxBurnCentsPerHour?: Cents;
  expiresAt?: Date;
  /** null asks for no timeout (refused under an issuer that has one); left out, the issuer's is inherited. */
  idleTimeoutMinutes?: number | null;
}

export interface TokenTerms {
  name: string | null;
  scopes: Scope[];
  spendLimitCents: Cents | null;
  maxRentalHours: number | null;
  maxBurnCentsPerHour: Cents | null;
  expiresAt: Date | null;
  idleTimeoutMinutes: number | null;
}

export const IDLE_TIMEOUT_MINUTES = { min: 5, max: 1440 } as const;

const checkBasics = (request: TokenRequest, now: Date): void => {
  if (request.spendLimitCents !== undefined && !(request.spendLimitCents > 0)) {
    throw invalidInput(['body', 'spend_limit_usd'], 'must be greater than 0');
  }
  if (request.maxRentalHours !== undefined && !(Number.isInteger(request.maxRentalHours) && request.maxRentalHours >= 1)) {
    throw invalidInput(['body', 'max_rental_hours'], 'must be a whole number of hours, at least 1');
  }
  if (request.maxBurnCentsPerHour !== undefined && !(request.maxBurnCentsPerHour > 0)) {
    throw invalidInput(['body', 'max_burn_usd_per_hour'], 'must be greater than 0');
  }
  if (request.expiresAt !== undefined && request.expiresAt.getTime() <= now.getTime()) {
    throw invalidInput(['body', 'expires_at'], 'must be in the future');
  }
  const idle = request.idleTimeoutMinutes;
  if (idle != null && !(Number.isInteger(idle) && idle >= IDLE_TIMEOUT_MINUTES.min && idle <= IDLE_TIMEOUT_MINUTES.max)) {
    throw invalidInput(['body', 'idle_timeout_minutes'], `must be a whole number of minutes from ${IDLE_TIMEOUT_MINUTES.min} to ${IDLE_TIMEOUT_MINUTES.max}`);
  }
};

/**
 * A child's idle timeout: no longer than its issuer's, and present when the issuer has one, so the activity that
 * keeps a child alive always keeps its ancestors alive too (docs/decisions.md, "Dead-man switch").
 */
const childIdleTimeout = (issuer: Token, asked: number | null | undefined): number | null => {
  const limit = issuer.idleTimeoutMinutes;
  const minutes = asked === undefined ? limit : asked;
  if (limit !== null && (minutes === null || minutes > limit)) {
    throw invalidInput(['body', 'idle_timeout_minutes'], `the issuing token times out after ${limit} idle minutes; a token it issues needs one of at most that`);
  }
  return minutes;
};

/** Terms of a tenant's first token, minted with the bootstrap secret: any scopes, any limits. */
export function rootTokenTerms(request: TokenRequest, now: Date): TokenTerms {
  checkBasics(request, now);
  return {
    name: request.name ?? null,
    scopes: normaliseScopes(request.scopes ?? DEFAULT_SCOPES),
    spendLimitCents: request.spendLimitCents ?? null,
    maxRentalHours: request.maxRentalHours ?? null,
    maxBurnCentsPerHour: request.maxBurnCentsPerHour ?? null,
    expiresAt: request.expiresAt ?? null,
    idleTimeoutMinutes: request.idleTimeoutMinutes ?? null,
  };
}

/**
 * Terms of a token issued by another. The child never gets more than its issuer: its scopes are a
 * subset, its cap fits in what the issuer's chain has left, its hours, burn ceiling and expiry are no larger.
 * A limit the request leaves out is inherited from the issuer's chain.
 * `issuerChain` is the issuing token followed by its ancestors.
 */
export function childTokenTerms(issuerChain: readonly Token[], request: TokenRequest, now: Date): TokenTerms {
  const issuer = issuerChain[0];
  if (!issuer) throw new Error('childTokenTerms needs the issuing token');
  checkBasics(request, now);

  const scopes = normaliseScopes(request.scopes ?? DEFAULT_SCOPES);
  const notHeld = missingScopes(issuer.scopes, scopes);
  if (notHeld.length > 0) {
    throw new DomainError(
      'SCOPE_NOT_HELD',
      `a token can only grant scopes it holds itself; this token lacks: ${notHeld.join(', ')}`,
    );
  }

  const remaining = remainingCents(issuerChain);
  const spendLimitCents = request.spendLimitCents ?? remaining;
  if (remaining !== null && spendLimitCents !== null && spendLimitCents > remaining) {
    throw invalidInput(
      ['body', 'spend_limit_usd'],
      `exceeds the issuing token's remaining spend cap of ${formatUsd(remaining)} USD`,
    );
  }

  const hoursLimit = maxRentalHours(issuerChain);
  const hours = request.maxRentalHours ?? hoursLimit;
  if (hoursLimit !== null && hours !== null && hours > hoursLimit) {
    throw invalidInput(['body', 'max_rental_hours'], `exceeds the issuing token's max_rental_hours of ${hoursLimit}`);
  }

  const burnLimit = maxBurnCentsPerHour(issuerChain);
  const burn = request.maxBurnCentsPerHour ?? burnLimit;
  if (burnLimit !== null && burn !== null && burn > burnLimit) {
    throw invalidInput(['body', 'max_burn_usd_per_hour'], `exceeds the issuing token's max_burn_usd_per_hour of ${formatUsd(burnLimit)}`);
  }

  const expiresAt = request.expiresAt ?? issuer.expiresAt;
  if (issuer.expiresAt !== null && expiresAt !== null && expiresAt.getTime() > issuer.expiresAt.getTime()) {
    throw invalidInput(
      ['body', 'expires_at'],
      `must not be later than the issuing token's expiry, ${issuer.expiresAt.toISOString()}`,
    );
  }

  const idleTimeoutMinutes = childIdleTimeout(issuer, request.idleTimeoutMinutes);
  return { name: request.name ?? null, scopes, spendLimitCents, maxRentalHours: hours, maxBurnCentsPerHour: burn, expiresAt, idleTimeoutMinutes };
}
