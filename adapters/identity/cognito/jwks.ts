import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import { JOSEError, JWKSTimeout } from 'jose/errors';

/** jose's codes for a key set it could not get, as against a token that failed against the keys. */
const JWKS_UNREADABLE = new Set(['ERR_JOSE_GENERIC', 'ERR_JWKS_INVALID']);

/** An id token that does not hold: bad signature, other pool or client, expired, or not an id token. */
export class IdTokenRejected extends Error {
  constructor(reason: string, options?: ErrorOptions) {
    super(`Cognito's id token was rejected: ${reason}`, options);
    this.name = 'IdTokenRejected';
  }
}

export interface IdTokenVerifierOptions {
  /** `https://cognito-idp.{region}.amazonaws.com/{poolId}` (or the fake's base URL plus the pool id). */
  issuer: string;
  /** The app client id: an id token's `aud`. */
  clientId: string;
  timeoutMs: number;
  /** Leeway for exp/iat against our clock. */
  clockToleranceSeconds: number;
}

/**
 * Checks a user pool id token as Cognito documents it: RS256 signature by a key of the pool's JWKS
 * ({iss}/.well-known/jwks.json, fetched once and again only for an unknown `kid`), `iss` the pool,
 * `aud` our client, not expired, `token_use` "id" (an access token carries `client_id`, not `aud`, and
 * must not pass for an identity), and a `sub`.
 */
export class IdTokenVerifier {
  private readonly options: IdTokenVerifierOptions;
  private readonly keys: ReturnType<typeof createRemoteJWKSet>;

  constructor(options: IdTokenVerifierOptions) {
    this.options = options;
    this.keys = createRemoteJWKSet(new URL(`${options.issuer}/.well-known/jwks.json`), {
      timeoutDuration: options.timeoutMs,
      // Cognito rotates keys rarely; an unknown kid refetches after this cooldown
      cooldownDuration: 30_000,
      cacheMaxAge: 24 * 3600_000,
    });
  }

  async verify(token: string): Promise<JWTPayload & { sub: string }> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.keys, {
        issuer: this.options.issuer,
        audience: this.options.clientId,
        algorithms: ['RS256'],
        clockTolerance: this.options.clockToleranceSeconds,
        requiredClaims: ['exp', 'iat', 'sub', 'token_use'],
      }));
    } catch (error) {
      if (error instanceof JWKSTimeout) throw new Error(`Cognito's JWKS did not answer in ${this.options.timeoutMs} ms`, { cause: error });
      if (error instanceof JOSEError && !JWKS_UNREADABLE.has(error.code)) throw new IdTokenRejected(error.message, { cause: error });
      // the JWKS could not be fetched or read (refused, 5xx, not a key set): an outage, not a bad token
      throw new Error(`Cognito's JWKS could not be read: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    if (payload.token_use !== 'id') throw new IdTokenRejected(`token_use is "${String(payload.token_use)}", not "id"`);
    if (typeof payload.sub !== 'string' || payload.sub === '') throw new IdTokenRejected('no sub');
    return payload as JWTPayload & { sub: string };
  }
}
