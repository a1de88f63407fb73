import { isSuccess, rawErrorMessage, successJson, UpstreamApiError, UpstreamHttp, UpstreamTransportError, type UpstreamCallOptions, type UpstreamHttpOptions } from '../shared/upstream-http.ts';

/** Shadeform answered with an HTTP error; its error body is not documented, so the text is kept as it came. */
export class ShadeformApiError extends UpstreamApiError {
  readonly reason: string | null;

  constructor(status: number, message: string, reason: string | null, retryAfterMs: number | null = null) {
    super(status, message, retryAfterMs);
    this.reason = reason;
  }
}

/** No HTTP answer at all: our timeout fired, the caller aborted, or the connection failed. */
export class ShadeformTransportError extends UpstreamTransportError {}

export interface ShadeformClientOptions extends UpstreamHttpOptions {
  apiKey: string;
}

const envelopeError = (status: number, text: string, retryAfter: number | null): ShadeformApiError => {
  try {
    const body = JSON.parse(text) as { message?: unknown; error?: unknown };
    const message = typeof body?.message === 'string' ? body.message : typeof body?.error === 'string' ? body.error : null;
    if (message) return new ShadeformApiError(status, message, null, retryAfter);
  } catch {
    // not JSON: its raw text, as Shadeform's own Terraform client shows it
  }
  return new ShadeformApiError(status, rawErrorMessage(status, text), null, retryAfter);
};

/** Shadeform's API over undici: the `X-API-KEY` header and its error bodies (pacing, timeouts, retries: shared/upstream-http.ts). */
export class ShadeformClient {
  private readonly apiKey: string;
  private readonly http: UpstreamHttp;

  constructor(options: ShadeformClientOptions) {
    this.apiKey = options.apiKey;
    this.http = new UpstreamHttp(options, { transport: (reason, message) => new ShadeformTransportError(reason, message) });
  }

  call(method: 'GET' | 'POST', path: string, options: UpstreamCallOptions): Promise<unknown> {
    return this.http.retrying(options.idempotent, options.signal, async () => {
      const answer = await this.http.send({ method, path, headers: { 'x-api-key': this.apiKey, accept: 'application/json' }, body: options.body, signal: options.signal });
      if (isSuccess(answer)) return successJson(answer, () => new ShadeformApiError(answer.status, 'success answer is not JSON', null));
      throw envelopeError(answer.status, answer.text, answer.retryAfterMs);
    });
  }
}
