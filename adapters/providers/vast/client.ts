import { request } from 'undici';
import { Pacer, pause, retryAfterMs } from '../shared/pacing.ts';

/**
 * How a call may be repeated after a failure:
 * - `safe`: reads, searches and deletes; retried on 429, 5xx, timeouts and network errors;
 * - `rate-limit-only`: actions with side effects (reboot); a 429 proves nothing ran, anything else might have;
 * - `never`: create. A lost or refused create is never re-sent blindly; the caller classifies it.
 */
export type RetryMode = 'safe' | 'rate-limit-only' | 'never';

export interface VastResponse {
  status: number;
  /** Parsed JSON, or the raw text when the body is not JSON (Vast's 429s are often plain text). */
  body: unknown;
  retryAfterMs: number | null;
}

/** The request never produced a response: it timed out, the connection failed, or the caller aborted. */
export class VastTransportError extends Error {
  readonly reason: 'timeout' | 'network' | 'aborted';

  constructor(reason: 'timeout' | 'network' | 'aborted', message: string) {
    super(message);
    this.name = 'VastTransportError';
    this.reason = reason;
  }
}

export interface VastClientOptions {
  apiKey: string;
  baseUrl: string;
  timeoutMs: number;
  retries: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** Minimum spacing between offer searches: Vast allows about 10 a minute per identity. */
  searchIntervalMs: number;
}

export interface CallOptions {
  body?: unknown;
  query?: Record<string, string>;
  retry: RetryMode;
  signal?: AbortSignal;
  /** Calls of the search endpoint go through the search pacer. */
  paced?: boolean;
}

const RETRYABLE_STATUS = new Set([429, 500, 502, 503, 504]);

const aborted = () => new VastTransportError('aborted', 'aborted by caller');

/** HTTP to console.vast.ai: bearer auth, a timeout per attempt, exponential backoff where retrying is safe. */
export class VastClient {
  readonly #options: VastClientOptions;
  readonly #searchPacer: Pacer;

  constructor(options: VastClientOptions) {
    this.#options = options;
    this.#searchPacer = new Pacer(options.searchIntervalMs);
  }

  async call(method: string, path: string, options: CallOptions): Promise<VastResponse> {
    const maxAttempts = options.retry === 'never' ? 1 : this.#options.retries + 1;
    for (let attempt = 1; ; attempt++) {
      if (options.paced) await this.#searchPacer.wait(options.signal, aborted);
      let response: VastResponse;
      try {
        response = await this.#once(method, path, options);
      } catch (error) {
        const transport = error as VastTransportError;
        const retryable = options.retry === 'safe' && transport.reason !== 'aborted';
        if (!retryable || attempt >= maxAttempts) throw transport;
        await pause(this.#backoff(attempt), options.signal, aborted);
        continue;
      }
      if (!this.#shouldRetry(response, options.retry) || attempt >= maxAttempts) return response;
      const delay = this.#backoff(attempt);
      // Vast sends no Retry-After on ordinary 429s; when it does (daily search quota) it can be hours away.
      if (response.retryAfterMs !== null && response.retryAfterMs > this.#options.backoffMaxMs) return response;
      await pause(Math.max(delay, response.retryAfterMs ?? 0), options.signal, aborted);
    }
  }

  #shouldRetry(response: VastResponse, mode: RetryMode): boolean {
    if (mode === 'never') return false;
    if (mode === 'rate-limit-only') return response.status === 429;
    return RETRYABLE_STATUS.has(response.status);
  }

  /** Full jitter on an exponential curve, capped. */
  #backoff(attempt: number): number {
    const ceiling = Math.min(this.#options.backoffMaxMs, this.#options.backoffBaseMs * 2 ** (attempt - 1));
    return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
  }

  async #once(method: string, path: string, options: CallOptions): Promise<VastResponse> {
    const url = new URL(`${this.#options.baseUrl}${path}`);
    for (const [key, value] of Object.entries(options.query ?? {})) url.searchParams.set(key, value);
    const timeout = AbortSignal.timeout(this.#options.timeoutMs);
    const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
    const hasBody = options.body !== undefined;
    try {
      const response = await request(url, {
        method,
        signal,
        headers: {
          authorization: `Bearer ${this.#options.apiKey}`,
          accept: 'application/json',
          ...(hasBody ? { 'content-type': 'application/json' } : {}),
        },
        body: hasBody ? JSON.stringify(options.body) : null,
      });
      const text = await response.body.text();
      let body: unknown = text;
      try {
        body = text.length > 0 ? JSON.parse(text) : null;
      } catch {
        // plain-text bodies (429s, proxies' error pages) stay text
      }
      return { status: response.statusCode, body, retryAfterMs: retryAfterMs(response.headers['retry-after']) };
    } catch (error) {
      if (options.signal?.aborted) throw new VastTransportError('aborted', 'aborted by caller');
      if (timeout.aborted) {
        throw new VastTransportError('timeout', `${method} ${url.pathname} timed out after ${this.#options.timeoutMs} ms`);
      }
      throw new VastTransportError('network', `${method} ${url.pathname} failed: ${(error as Error).message}`);
    }
  }
}
