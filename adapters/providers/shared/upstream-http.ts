import { request } from 'undici';
import { Pacer, pause, retryAfterMs } from './pacing.ts';

/**
 * The part of an HTTP provider client that is the same for every cloud spoken to over plain REST: pacing under
 * the cloud's rate limit, a timeout per attempt joined to the caller's signal, retries of safe calls with an
 * exponential backoff (or the server's Retry-After), and the errors for an error status and for no answer at all.
 * A client keeps what is its cloud's own: authentication, its error envelope, what a success answer carries, and
 * its error classes (subclasses of the two below, so each adapter classifies its own cloud's failures).
 */

/** No HTTP answer at all: our timeout fired, the caller aborted, or the connection failed. */
export class UpstreamTransportError extends Error {
  readonly reason: 'timeout' | 'aborted' | 'network';

  constructor(reason: 'timeout' | 'aborted' | 'network', message: string) {
    super(message);
    this.name = new.target.name;
    this.reason = reason;
  }
}

/** The cloud answered with an error status; a client's subclass adds what its envelope carries. */
export class UpstreamApiError extends Error {
  readonly status: number;
  /** The server's Retry-After, when it sent one. */
  readonly retryAfterMs: number | null;

  constructor(status: number, message: string, retryAfterMs: number | null = null) {
    super(message);
    this.name = new.target.name;
    this.status = status;
    this.retryAfterMs = retryAfterMs;
  }
}

/** 429, 5xx and a lost answer are worth another try of a safe call; an abort by the caller never is. */
export const isRetryable = (error: unknown): boolean =>
  error instanceof UpstreamApiError ? error.status === 429 || error.status >= 500 : error instanceof UpstreamTransportError && error.reason !== 'aborted';

/** The message of an error answer whose body is no envelope the client knows (a proxy page, an empty body). */
export const rawErrorMessage = (status: number, text: string): string => `HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ''}`;

export interface UpstreamHttpOptions {
  /** Including the API's version prefix; a trailing slash is dropped. */
  baseUrl: string;
  /** Per attempt. */
  timeoutMs: number;
  /** Extra attempts for calls that are safe to repeat. */
  retries: number;
  /** First backoff delay; doubles per attempt, capped at retryMaxMs. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** Spacing between any two requests. */
  minIntervalMs: number;
}

export interface UpstreamHttpErrors {
  /** The client's own error for no answer at all. */
  transport(reason: 'timeout' | 'aborted' | 'network', message: string): UpstreamTransportError;
  /** Whether a failure of a safe call is worth another try; default isRetryable. */
  retryable?(error: unknown): boolean;
}

/** How a client's caller asks for one call. */
export interface UpstreamCallOptions {
  /** Sent as JSON. */
  body?: unknown;
  /** Safe to send again after a 429, 5xx or lost answer (reads, deletes). Creates never are. */
  idempotent: boolean;
  signal?: AbortSignal;
}

/** One request as sent. */
export interface UpstreamRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  /** Sent as JSON (with its content type) when present. */
  body?: unknown;
  signal?: AbortSignal;
  /** A pacer this request waits in before the general one (a cloud's own limit on launches). */
  pacer?: Pacer;
}

/** An answer of any status, before the client reads its envelope. */
export interface UpstreamAnswer {
  status: number;
  text: string;
  retryAfterMs: number | null;
}

export class UpstreamHttp {
  private readonly options: UpstreamHttpOptions;
  private readonly errors: UpstreamHttpErrors;
  private readonly pacer: Pacer;

  constructor(options: UpstreamHttpOptions, errors: UpstreamHttpErrors) {
    this.options = { ...options, baseUrl: options.baseUrl.replace(/\/+$/, '') };
    this.errors = errors;
    this.pacer = new Pacer(options.minIntervalMs);
  }

  /** The client's error for an abort by the caller. */
  readonly aborted = (): UpstreamTransportError => this.errors.transport('aborted', 'request aborted by the caller');

  /**
   * `attempt` once or, for a call safe to repeat, up to 1 + retries times while it fails retryably, waiting between
   * tries the exponential backoff or the server's Retry-After (whichever is longer, at most retryMaxMs). A create is
   * never repeated: a lost answer may have made a machine.
   */
  async retrying<T>(idempotent: boolean, signal: AbortSignal | undefined, attempt: () => Promise<T>): Promise<T> {
    const attempts = idempotent ? 1 + Math.max(0, this.options.retries) : 1;
    const retryable = this.errors.retryable ?? isRetryable;
    for (let tried = 1; ; tried += 1) {
      try {
        return await attempt();
      } catch (error) {
        if (tried >= attempts || !retryable(error)) throw error;
        const backoff = this.options.retryBaseMs * 2 ** (tried - 1);
        const hinted = error instanceof UpstreamApiError ? (error.retryAfterMs ?? 0) : 0;
        await pause(Math.min(this.options.retryMaxMs, Math.max(backoff, hinted)), signal, this.aborted);
      }
    }
  }

  /** One request, paced, within timeoutMs and the caller's signal; the answer whatever its status. */
  async send(sent: UpstreamRequest): Promise<UpstreamAnswer> {
    if (sent.pacer) await sent.pacer.wait(sent.signal, this.aborted);
    await this.pacer.wait(sent.signal, this.aborted);
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    const signal = sent.signal ? AbortSignal.any([timeout, sent.signal]) : timeout;
    const headers = sent.body === undefined ? sent.headers : { ...sent.headers, 'content-type': 'application/json' };
    try {
      const response = await request(`${this.options.baseUrl}${sent.path}`, {
        method: sent.method as 'GET',
        headers,
        body: sent.body === undefined ? undefined : JSON.stringify(sent.body),
        signal,
      });
      const retryAfter = response.headers['retry-after'];
      return { status: response.statusCode, text: await response.body.text(), retryAfterMs: retryAfterMs(retryAfter) };
    } catch (error) {
      if (timeout.aborted) throw this.errors.transport('timeout', `no answer within ${this.options.timeoutMs} ms`);
      if (sent.signal?.aborted) throw this.aborted();
      throw this.errors.transport('network', (error as Error).message);
    }
  }
}

/** A success answer's JSON: undefined when empty; `notJson` when it is not JSON. */
export function successJson(answer: UpstreamAnswer, notJson: () => Error): unknown {
  if (answer.text === '') return undefined;
  try {
    return JSON.parse(answer.text);
  } catch {
    throw notJson();
  }
}

export const isSuccess = (answer: UpstreamAnswer): boolean => answer.status >= 200 && answer.status < 300;
