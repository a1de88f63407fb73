import { isSuccess, rawErrorMessage, successJson, UpstreamApiError, UpstreamHttp, UpstreamTransportError, type UpstreamCallOptions, type UpstreamHttpOptions } from '../shared/upstream-http.ts';

/** Hyperstack answered with an HTTP error: its envelope is `{status: false, message, error_reason}`. */
export class HyperstackApiError extends UpstreamApiError {
  readonly reason: string | null;

  constructor(status: number, message: string, reason: string | null, retryAfterMs: number | null = null) {
    super(status, message, retryAfterMs);
    this.reason = reason;
  }
}

/** No HTTP answer at all: our timeout fired, the caller aborted, or the connection failed. */
export class HyperstackTransportError extends UpstreamTransportError {}

export interface HyperstackClientOptions extends UpstreamHttpOptions {
  apiKey: string;
}

const envelopeError = (status: number, text: string, retryAfter: number | null): HyperstackApiError => {
  try {
    const body = JSON.parse(text) as { message?: unknown; error_reason?: unknown };
    if (typeof body?.message === 'string') return new HyperstackApiError(status, body.message, typeof body.error_reason === 'string' ? body.error_reason : null, retryAfter);
  } catch {
    // not JSON: a proxy page
  }
  return new HyperstackApiError(status, rawErrorMessage(status, text), null, retryAfter);
};

/** Hyperstack's Infrahub API over undici: the `api_key` header and its envelope (pacing, timeouts, retries: shared/upstream-http.ts). */
export class HyperstackClient {
  private readonly apiKey: string;
  private readonly http: UpstreamHttp;

  constructor(options: HyperstackClientOptions) {
    this.apiKey = options.apiKey;
    this.http = new UpstreamHttp(options, { transport: (reason, message) => new HyperstackTransportError(reason, message) });
  }

  call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, options: UpstreamCallOptions): Promise<unknown> {
    return this.http.retrying(options.idempotent, options.signal, async () => {
      const answer = await this.http.send({ method, path, headers: { api_key: this.apiKey, accept: 'application/json' }, body: options.body, signal: options.signal });
      if (isSuccess(answer)) return successJson(answer, () => new HyperstackApiError(answer.status, 'success answer is not JSON', null));
      throw envelopeError(answer.status, answer.text, answer.retryAfterMs);
    });
  }
}
