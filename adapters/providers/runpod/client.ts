/**
 * HTTP to RunPod over undici: REST v2 under `<baseUrl>/v2` and GraphQL at `<baseUrl>/graphql`,
 * both with `Authorization: Bearer <key>`. Each call has a deadline; retries follow RunPod's
 * documented rules: a 429 waits for `Retry-After`; a 5xx or a dropped connection is retried only
 * for calls that are safe to repeat, never for a create.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { request, type Dispatcher } from 'undici';
import { retryAfterMs } from '../shared/pacing.ts';

export interface RunpodClientOptions {
  apiKey: string;
  baseUrl: string;
  graphqlUrl: string;
  timeoutMs: number;
  /** Extra attempts after the first, for the failures a call may retry. */
  retries: number;
  /** First backoff step for 5xx and network errors; doubles per attempt, with jitter. */
  backoffBaseMs: number;
  /** A 429 asking for a longer wait than this fails at once rather than stalling the caller. */
  maxRetryAfterMs: number;
  dispatcher?: Dispatcher;
}

/**
 * - `safe`: reads, DELETE and other calls that may run twice: retry 429, 5xx and network errors.
 * - `once`: create and restart: retry only a 429 (the rate limiter refused it, so nothing ran).
 */
export type RetryPolicy = 'safe' | 'once';

/** RunPod answered with an error status (v2 errors are RFC 9457 problem documents). */
export class RunpodHttpError extends Error {
  readonly status: number;
  readonly detail: string;
  constructor(status: number, detail: string) {
    super(`HTTP ${status}: ${detail}`);
    this.name = 'RunpodHttpError';
    this.status = status;
    this.detail = detail;
  }
}

/** No answer within the deadline: the request may or may not have been acted on. */
export class RunpodTimeoutError extends Error {
  constructor(what: string, timeoutMs: number) {
    super(`${what} got no answer within ${timeoutMs} ms`);
    this.name = 'RunpodTimeoutError';
  }
}

/** The connection failed or broke, or the caller aborted. */
export class RunpodNetworkError extends Error {
  constructor(what: string, cause: unknown) {
    super(`${what} failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'RunpodNetworkError';
  }
}

/** An answer we cannot read: not JSON, or not the documented shape. */
export class RunpodProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RunpodProtocolError';
  }
}

/** GraphQL reports errors in the body of an HTTP 200, so they are checked on every answer. */
export class RunpodGraphqlError extends Error {
  readonly messages: string[];
  constructor(messages: string[]) {
    super(`GraphQL error: ${messages.join('; ')}`);
    this.name = 'RunpodGraphqlError';
    this.messages = messages;
  }
}

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export interface CallOptions {
  query?: Record<string, string>;
  body?: unknown;
  retry: RetryPolicy;
  signal?: AbortSignal;
}

const header = (headers: RawResponse['headers'], name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

const errorMessage = (entry: unknown): string =>
  typeof entry === 'string'
    ? entry
    : typeof entry === 'object' && entry !== null && typeof (entry as { message?: unknown }).message === 'string'
      ? (entry as { message: string }).message
      : JSON.stringify(entry);

const problemDetail = (response: RawResponse): string => {
  try {
    const body = JSON.parse(response.text) as { title?: unknown; detail?: unknown; errors?: unknown; message?: unknown };
    const parts = [body.detail ?? body.message ?? body.title].filter((p): p is string => typeof p === 'string');
    // v2 lists validation failures as strings; GraphQL's errors are objects with a message.
    if (Array.isArray(body.errors)) parts.push(...body.errors.map(errorMessage));
    if (parts.length > 0) return parts.join('; ');
  } catch {
    // not JSON: fall through to the raw text
  }
  return response.text.slice(0, 200) || 'no detail';
};

const parseJson = (text: string, what: string): unknown => {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new RunpodProtocolError(`${what} answered with something that is not JSON`);
  }
};

export class RunpodClient {
  readonly #options: RunpodClientOptions;

  constructor(options: RunpodClientOptions) {
    this.#options = options;
  }

  /** A REST v2 call; resolves with the parsed JSON body (undefined for 204), throws on non-2xx. */
  async rest(method: string, path: string, options: CallOptions): Promise<unknown> {
    const url = new URL(`${this.#options.baseUrl.replace(/\/+$/, '')}${path}`);
    for (const [name, value] of Object.entries(options.query ?? {})) url.searchParams.set(name, value);
    const response = await this.#withRetries(`${method} ${path}`, method, url, options);
    return parseJson(response.text, `${method} ${path}`);
  }

  /**
   * A GraphQL query or mutation; resolves with `data`, throws RunpodGraphqlError when `errors` is present. A mutation
   * that makes something passes `once`, as a REST create does.
   */
  async graphql(query: string, variables: Record<string, unknown>, signal?: AbortSignal, retry: RetryPolicy = 'safe'): Promise<unknown> {
    const what = 'POST /graphql';
    const response = await this.#withRetries(what, 'POST', new URL(this.#options.graphqlUrl), {
      body: { query, variables },
      retry,
      ...(signal ? { signal } : {}),
    });
    const body = parseJson(response.text, what) as { data?: unknown; errors?: unknown } | undefined;
    if (body === undefined || typeof body !== 'object' || body === null) throw new RunpodProtocolError(`${what} answered with no body`);
    if (Array.isArray(body.errors) && body.errors.length > 0) {
      throw new RunpodGraphqlError(body.errors.map(errorMessage));
    }
    if (body.data === undefined || body.data === null) throw new RunpodProtocolError(`${what} answered without data`);
    return body.data;
  }

  async #withRetries(what: string, method: string, url: URL, options: CallOptions): Promise<RawResponse> {
    const { retries, maxRetryAfterMs } = this.#options;
    const wait = (ms: number) => sleep(ms, undefined, options.signal ? { signal: options.signal } : undefined);
    for (let attempt = 0; ; attempt += 1) {
      const last = attempt >= retries;
      let response: RawResponse;
      try {
        response = await this.#once(what, method, url, options.body, options.signal);
      } catch (error) {
        // A timeout is not retried: the caller's deadline would multiply, and a create may have run.
        const retryable = error instanceof RunpodNetworkError && options.retry === 'safe' && !options.signal?.aborted;
        if (!retryable || last) throw error;
        await wait(this.#backoff(attempt));
        continue;
      }
      if (response.status >= 200 && response.status < 300) return response;

      const error = new RunpodHttpError(response.status, problemDetail(response));
      if (last) throw error;
      if (response.status === 429) {
        const delay = retryAfterMs(header(response.headers, 'retry-after')) ?? this.#backoff(attempt);
        if (delay > maxRetryAfterMs) throw error;
        await wait(delay);
        continue;
      }
      if (response.status >= 500 && options.retry === 'safe') {
        await wait(this.#backoff(attempt));
        continue;
      }
      throw error;
    }
  }

  #backoff(attempt: number): number {
    const step = this.#options.backoffBaseMs * 2 ** attempt;
    return step / 2 + Math.random() * (step / 2);
  }

  async #once(what: string, method: string, url: URL, body: unknown, signal: AbortSignal | undefined): Promise<RawResponse> {
    const deadline = AbortSignal.timeout(this.#options.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, deadline]) : deadline;
    try {
      const response = await request(url, {
        method: method as Dispatcher.HttpMethod,
        headers: {
          authorization: `Bearer ${this.#options.apiKey}`,
          accept: 'application/json, application/problem+json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: combined,
        ...(this.#options.dispatcher ? { dispatcher: this.#options.dispatcher } : {}),
      });
      const text = await response.body.text();
      return { status: response.statusCode, headers: response.headers, text };
    } catch (error) {
      if (deadline.aborted && !signal?.aborted) throw new RunpodTimeoutError(what, this.#options.timeoutMs);
      throw new RunpodNetworkError(what, error);
    }
  }
}
