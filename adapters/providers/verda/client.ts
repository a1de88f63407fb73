import { isSuccess, rawErrorMessage, UpstreamApiError, UpstreamHttp, UpstreamTransportError, type UpstreamCallOptions, type UpstreamHttpOptions } from '../shared/upstream-http.ts';

/** Error codes Verda's description lists for its `{code, message}` envelope. */
export const VERDA_ERROR_CODES = [
  'invalid_request',
  'unauthorized_request',
  'insufficient_funds',
  'forbidden_action',
  'not_found',
  'conflict',
  'rate_limit_exceeded',
  'server_error',
  'service_unavailable',
] as const;

/** Verda answered with an HTTP error; `code` is its envelope's code when it sent one. */
export class VerdaApiError extends UpstreamApiError {
  readonly code: string | null;

  constructor(status: number, code: string | null, message: string, retryAfterMs: number | null = null) {
    super(status, message, retryAfterMs);
    this.code = code;
  }
}

/** No HTTP answer at all: our timeout fired, the caller aborted, or the connection failed. */
export class VerdaTransportError extends UpstreamTransportError {}

/** `baseUrl` includes the version prefix (https://api.verda.com/v1); `minIntervalMs`: Verda allows 60 a minute per method and path. */
export interface VerdaClientOptions extends UpstreamHttpOptions {
  clientId: string;
  clientSecret: string;
  /** A token is renewed this long before its `expires_in` runs out (at most a tenth of its life). */
  renewBeforeMs: number;
  /** Milliseconds since the epoch: the token's life is counted on it (a test moves it). */
  now: () => number;
}

/** What a call answers: its status, and its body as JSON, or as text when it is not JSON (Verda's new ids). */
export interface VerdaAnswer {
  status: number;
  body: unknown;
}

interface Token {
  accessToken: string;
  refreshToken: string | null;
  /** When it is renewed: before its expires_in runs out. */
  renewAt: number;
}

const parse = (text: string): unknown => {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

const envelopeError = (status: number, text: string, retryAfter: number | null): VerdaApiError => {
  const body = parse(text) as { code?: unknown; message?: unknown } | string | undefined;
  if (body && typeof body === 'object' && typeof body.code === 'string') {
    return new VerdaApiError(status, body.code, typeof body.message === 'string' ? body.message : `HTTP ${status}`, retryAfter);
  }
  return new VerdaApiError(status, null, rawErrorMessage(status, text), retryAfter);
};

/**
 * Verda's REST API over undici: an OAuth2 client-credentials bearer renewed before its `expires_in` runs out (by
 * its refresh token, else by the credentials again) and the `{code, message}` envelope (pacing, timeouts, retries
 * of safe calls: shared/upstream-http.ts).
 */
export class VerdaClient {
  private readonly options: VerdaClientOptions;
  private readonly http: UpstreamHttp;
  private token: Token | null = null;
  private pending: Promise<Token> | null = null;

  constructor(options: VerdaClientOptions) {
    this.options = options;
    this.http = new UpstreamHttp(options, { transport: (reason, message) => new VerdaTransportError(reason, message) });
  }

  call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, options: UpstreamCallOptions): Promise<VerdaAnswer> {
    return this.http.retrying(options.idempotent, options.signal, () => this.authorized(method, path, options));
  }

  /** One call with a live bearer; a 401 (a token revoked early) gets one more try with a new one: nothing was done. */
  private async authorized(method: string, path: string, options: UpstreamCallOptions): Promise<VerdaAnswer> {
    const token = await this.bearer(options.signal);
    try {
      return await this.once(method, path, options, token.accessToken);
    } catch (error) {
      if (!(error instanceof VerdaApiError) || error.status !== 401) throw error;
      if (this.token === token) this.token = null;
      return this.once(method, path, options, (await this.bearer(options.signal)).accessToken);
    }
  }

  /** The current bearer, renewed first when its time is up; concurrent callers share one renewal. */
  private async bearer(signal?: AbortSignal): Promise<Token> {
    if (this.token && this.options.now() < this.token.renewAt) return this.token;
    this.pending ??= this.renew(this.token).finally(() => {
      this.pending = null;
    });
    const token = await this.pending;
    if (signal?.aborted) throw this.http.aborted();
    return token;
  }

  private async renew(previous: Token | null): Promise<Token> {
    if (previous?.refreshToken) {
      try {
        return (this.token = await this.grant({ grant_type: 'refresh_token', refresh_token: previous.refreshToken }));
      } catch (error) {
        // a refresh token refused (expired, revoked): the credentials themselves, as the SDK does
        if (!(error instanceof VerdaApiError) || (error.status !== 400 && error.status !== 401)) throw error;
      }
    }
    return (this.token = await this.grant({ grant_type: 'client_credentials', client_id: this.options.clientId, client_secret: this.options.clientSecret }));
  }

  private async grant(body: Record<string, string>): Promise<Token> {
    const asked = this.options.now();
    const { body: answer } = await this.once('POST', '/oauth2/token', { body, idempotent: false }, null);
    const token = answer as { access_token?: unknown; refresh_token?: unknown; expires_in?: unknown };
    if (typeof token?.access_token !== 'string' || typeof token.expires_in !== 'number' || !(token.expires_in > 0)) {
      throw new VerdaApiError(200, null, 'token answer without access_token and a positive expires_in');
    }
    const lifeMs = token.expires_in * 1000;
    // counted from when it was asked for: the answer's travel time is spent of its life already
    return {
      accessToken: token.access_token,
      refreshToken: typeof token.refresh_token === 'string' ? token.refresh_token : null,
      renewAt: asked + lifeMs - Math.min(this.options.renewBeforeMs, lifeMs / 10),
    };
  }

  private async once(method: string, path: string, options: UpstreamCallOptions, accessToken: string | null): Promise<VerdaAnswer> {
    // Verda's description requires a user-agent on its writes
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'gpu-control-plane' };
    if (accessToken) headers.authorization = `Bearer ${accessToken}`;
    const answer = await this.http.send({ method, path, headers, body: options.body, signal: options.signal });
    if (isSuccess(answer)) return { status: answer.status, body: parse(answer.text) };
    throw envelopeError(answer.status, answer.text, answer.retryAfterMs);
  }
}
