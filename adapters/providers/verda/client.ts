import { request } from 'undici';
import { Pacer, pause, retryAfterMs } from '../shared/pacing.ts';

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
export class VerdaApiError extends Error {
  readonly status: number;
  readonly code: string | null;
  readonly retryAfterMs: number | null;

  constructor(status: number, code: string | null, message: string, retryAfterMs: number | null = null) {
    super(message);
    this.name = 'VerdaApiError';
    this.status = status;
    this.code = code;
    this.retryAfterMs = retryAfterMs;
  }
}

/** No HTTP answer at all: our timeout fired, the caller aborted, or the connection failed. */
export class VerdaTransportError extends Error {
  readonly reason: 'timeout' | 'aborted' | 'network';

  constructor(reason: 'timeout' | 'aborted' | 'network', message: string) {
    super(message);
    this.name = 'VerdaTransportError';
    this.reason = reason;
  }
}

export interface VerdaClientOptions {
  clientId: string;
  clientSecret: string;
  /** Including the version prefix: https://api.verda.com/v1. */
  baseUrl: string;
  timeoutMs: number;
  retries: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** Spacing between two requests (Verda allows 60 a minute per method and path). */
  minIntervalMs: number;
  /** A token is renewed this long before its `expires_in` runs out (at most a tenth of its life). */
  renewBeforeMs: number;
  /** Milliseconds since the epoch: the token's life is counted on it (a test moves it). */
  now: () => number;
}

export interface CallOptions {
  body?: unknown;
  /** Safe to send again after a 429, 5xx or lost answer. Creates never are. */
  idempotent: boolean;
  signal?: AbortSignal;
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

const aborted = () => new VerdaTransportError('aborted', 'request aborted by the caller');

const isRetryable = (error: unknown): boolean =>
  error instanceof VerdaApiError ? error.status === 429 || error.status >= 500 : error instanceof VerdaTransportError && error.reason !== 'aborted';

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
  return new VerdaApiError(status, null, `HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ''}`, retryAfter);
};

/**
 * Verda's REST API over undici: an OAuth2 client-credentials bearer renewed before its `expires_in` runs out (by
 * its refresh token, else by the credentials again), the `{code, message}` envelope, timeouts, pacing and retries
 * of safe calls.
 */
export class VerdaClient {
  private readonly options: VerdaClientOptions;
  private readonly pacer: Pacer;
  private token: Token | null = null;
  private pending: Promise<Token> | null = null;

  constructor(options: VerdaClientOptions) {
    this.options = { ...options, baseUrl: options.baseUrl.replace(/\/+$/, '') };
    this.pacer = new Pacer(options.minIntervalMs);
  }

  async call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, options: CallOptions): Promise<VerdaAnswer> {
    const attempts = options.idempotent ? 1 + Math.max(0, this.options.retries) : 1;
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.authorized(method, path, options);
      } catch (error) {
        if (attempt >= attempts || !isRetryable(error)) throw error;
        const backoff = this.options.retryBaseMs * 2 ** (attempt - 1);
        const hinted = error instanceof VerdaApiError ? (error.retryAfterMs ?? 0) : 0;
        await pause(Math.min(this.options.retryMaxMs, Math.max(backoff, hinted)), options.signal, aborted);
      }
    }
  }

  /** One call with a live bearer; a 401 (a token revoked early) gets one more try with a new one: nothing was done. */
  private async authorized(method: string, path: string, options: CallOptions): Promise<VerdaAnswer> {
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
    if (signal?.aborted) throw aborted();
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

  private async once(method: string, path: string, options: CallOptions, accessToken: string | null): Promise<VerdaAnswer> {
    await this.pacer.wait(options.signal, aborted);
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
    // Verda's description requires a user-agent on its writes
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'gpu-control-plane' };
    if (accessToken) headers.authorization = `Bearer ${accessToken}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';

    let status: number;
    let text: string;
    let retryAfter: string | string[] | undefined;
    try {
      const response = await request(`${this.options.baseUrl}${path}`, {
        method: method as 'GET',
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal,
      });
      status = response.statusCode;
      retryAfter = response.headers['retry-after'];
      text = await response.body.text();
    } catch (error) {
      if (timeout.aborted) throw new VerdaTransportError('timeout', `no answer within ${this.options.timeoutMs} ms`);
      if (options.signal?.aborted) throw aborted();
      throw new VerdaTransportError('network', (error as Error).message);
    }
    if (status >= 200 && status < 300) return { status, body: parse(text) };
    throw envelopeError(status, text, retryAfterMs(retryAfter));
  }
}
