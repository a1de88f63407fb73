import { request } from 'undici';
import { Pacer, pause, retryAfterMs } from '../shared/pacing.ts';

/** Shadeform answered with an HTTP error; its error body is not documented, so the text is kept as it came. */
export class ShadeformApiError extends Error {
  readonly status: number;
  readonly reason: string | null;
  readonly retryAfterMs: number | null;

  constructor(status: number, message: string, reason: string | null, retryAfterMs: number | null = null) {
    super(message);
    this.name = 'ShadeformApiError';
    this.status = status;
    this.reason = reason;
    this.retryAfterMs = retryAfterMs;
  }
}

/** No HTTP answer at all: our timeout fired, the caller aborted, or the connection failed. */
export class ShadeformTransportError extends Error {
  readonly reason: 'timeout' | 'aborted' | 'network';

  constructor(reason: 'timeout' | 'aborted' | 'network', message: string) {
    super(message);
    this.name = 'ShadeformTransportError';
    this.reason = reason;
  }
}

export interface ShadeformClientOptions {
  apiKey: string;
  /** Including the version prefix: https://api.shadeform.ai/v1. */
  baseUrl: string;
  timeoutMs: number;
  retries: number;
  retryBaseMs: number;
  retryMaxMs: number;
  minIntervalMs: number;
}

export interface CallOptions {
  body?: unknown;
  /** Safe to send again after a 429, 5xx or lost answer. Creates never are. */
  idempotent: boolean;
  signal?: AbortSignal;
}

const aborted = () => new ShadeformTransportError('aborted', 'request aborted by the caller');

const isRetryable = (error: unknown): boolean =>
  error instanceof ShadeformApiError ? error.status === 429 || error.status >= 500 : error instanceof ShadeformTransportError && error.reason !== 'aborted';

const envelopeError = (status: number, text: string, retryAfter: number | null): ShadeformApiError => {
  try {
    const body = JSON.parse(text) as { message?: unknown; error?: unknown };
    const message = typeof body?.message === 'string' ? body.message : typeof body?.error === 'string' ? body.error : null;
    if (message) return new ShadeformApiError(status, message, null, retryAfter);
  } catch {
    // not JSON: its raw text, as Shadeform's own Terraform client shows it
  }
  return new ShadeformApiError(status, `HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ''}`, null, retryAfter);
};

/** Shadeform's API over undici: the `X-API-KEY` header, timeouts, pacing and retries of safe calls. */
export class ShadeformClient {
  private readonly options: ShadeformClientOptions;
  private readonly pacer: Pacer;

  constructor(options: ShadeformClientOptions) {
    this.options = { ...options, baseUrl: options.baseUrl.replace(/\/+$/, '') };
    this.pacer = new Pacer(options.minIntervalMs);
  }

  async call(method: 'GET' | 'POST', path: string, options: CallOptions): Promise<unknown> {
    const attempts = options.idempotent ? 1 + Math.max(0, this.options.retries) : 1;
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.once(method, path, options);
      } catch (error) {
        if (attempt >= attempts || !isRetryable(error)) throw error;
        const backoff = this.options.retryBaseMs * 2 ** (attempt - 1);
        const hinted = error instanceof ShadeformApiError ? (error.retryAfterMs ?? 0) : 0;
        await pause(Math.min(this.options.retryMaxMs, Math.max(backoff, hinted)), options.signal, aborted);
      }
    }
  }

  private async once(method: string, path: string, options: CallOptions): Promise<unknown> {
    await this.pacer.wait(options.signal, aborted);
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
    const headers: Record<string, string> = { 'x-api-key': this.options.apiKey, accept: 'application/json' };
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
      if (timeout.aborted) throw new ShadeformTransportError('timeout', `no answer within ${this.options.timeoutMs} ms`);
      if (options.signal?.aborted) throw aborted();
      throw new ShadeformTransportError('network', (error as Error).message);
    }
    if (status >= 200 && status < 300) {
      if (text === '') return undefined;
      try {
        return JSON.parse(text);
      } catch {
        throw new ShadeformApiError(status, 'success answer is not JSON', null);
      }
    }
    throw envelopeError(status, text, retryAfterMs(retryAfter));
  }
}
