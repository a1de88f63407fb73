import { request } from 'undici';
import { Pacer, pause, retryAfterMs } from '../shared/pacing.ts';

/** Error codes the Lambda Cloud API documents (OpenAPI 1.10.0); `provider/...` ones come from its upstreams. */
export const LAMBDA_ERROR_CODES = [
  'global/invalid-api-key',
  'global/account-inactive',
  'global/invalid-address',
  'global/forbidden',
  'global/invalid-parameters',
  'global/object-does-not-exist',
  'global/not-found',
  'global/quota-exceeded',
  'global/conflict',
  'global/duplicate',
  'global/internal-error',
  'instance-operations/launch/insufficient-capacity',
  'instance-operations/launch/file-system-in-wrong-region',
  'filesystems/filesystem-in-use',
  'firewall-rulesets/firewall-ruleset-in-use',
] as const;

export type LambdaErrorCode = (typeof LAMBDA_ERROR_CODES)[number] | `provider/${string}`;

const isKnownCode = (code: string): code is LambdaErrorCode =>
  (LAMBDA_ERROR_CODES as readonly string[]).includes(code) || code.startsWith('provider/');

/** Lambda answered with an HTTP error; `code` is the typed `error.code` of its envelope when it sent one. */
export class LambdaApiError extends Error {
  readonly status: number;
  /** A documented code, or the raw text of an undocumented one, or null when the body had no envelope. */
  readonly code: LambdaErrorCode | string | null;
  readonly suggestion: string | null;
  /** The server's Retry-After, when it sent one (Lambda's 429s are not documented to). */
  readonly retryAfterMs: number | null;

  constructor(status: number, code: string | null, message: string, suggestion: string | null, retryAfterMs: number | null = null) {
    super(message);
    this.name = 'LambdaApiError';
    this.status = status;
    this.code = code;
    this.suggestion = suggestion;
    this.retryAfterMs = retryAfterMs;
  }

  get documented(): boolean {
    return this.code !== null && isKnownCode(this.code);
  }
}

/** No HTTP answer at all: our timeout fired, the caller aborted, or the connection failed. */
export class LambdaTransportError extends Error {
  readonly reason: 'timeout' | 'aborted' | 'network';

  constructor(reason: 'timeout' | 'aborted' | 'network', message: string) {
    super(message);
    this.name = 'LambdaTransportError';
    this.reason = reason;
  }
}

export interface LambdaClientOptions {
  apiKey: string;
  baseUrl: string;
  timeoutMs: number;
  /** Extra attempts for calls that are safe to repeat. */
  retries: number;
  /** First backoff delay; doubles per attempt, capped at retryMaxMs. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** Spacing between any two requests (Lambda allows about 1 per second). */
  minIntervalMs: number;
  /** Spacing between two launches (Lambda allows 1 per 12 seconds). */
  launchIntervalMs: number;
}

export interface CallOptions {
  body?: unknown;
  /** Safe to send again after a 429, 5xx or lost answer (reads, terminate, deletes). Creates never are. */
  idempotent: boolean;
  /** Subject to the launch spacing as well as the general one. */
  launch?: boolean;
  signal?: AbortSignal;
}

const aborted = () => new LambdaTransportError('aborted', 'request aborted by the caller');

/** 429, 5xx and Lambda's `provider/...` upstream errors are worth another try; a lost answer too. */
const isRetryable = (error: unknown): boolean => {
  if (error instanceof LambdaApiError) {
    return error.status === 429 || error.status >= 500 || (error.code?.startsWith('provider/') ?? false);
  }
  return error instanceof LambdaTransportError && error.reason !== 'aborted';
};

const readEnvelopeError = (status: number, text: string, retryAfter: number | null): LambdaApiError => {
  try {
    const parsed = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; suggestion?: unknown } };
    const error = parsed.error;
    if (error && typeof error.code === 'string') {
      return new LambdaApiError(
        status,
        error.code,
        typeof error.message === 'string' ? error.message : `HTTP ${status}`,
        typeof error.suggestion === 'string' ? error.suggestion : null,
        retryAfter,
      );
    }
  } catch {
    // not JSON: a proxy page or an empty body; keep the status only
  }
  return new LambdaApiError(status, null, `HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ''}`, null, retryAfter);
};

/** The Lambda Cloud REST API over undici: auth, envelope, timeouts, pacing and retries of safe calls. */
export class LambdaClient {
  private readonly options: LambdaClientOptions;
  private readonly pacer: Pacer;
  private readonly launchPacer: Pacer;

  constructor(options: LambdaClientOptions) {
    this.options = { ...options, baseUrl: options.baseUrl.replace(/\/+$/, '') };
    this.pacer = new Pacer(options.minIntervalMs);
    this.launchPacer = new Pacer(options.launchIntervalMs);
  }

  /** The `data` payload of a successful answer (still unvalidated: mapping.ts owns the wire shapes). */
  async call(method: 'GET' | 'POST' | 'DELETE', path: string, options: CallOptions): Promise<unknown> {
    const attempts = options.idempotent ? 1 + Math.max(0, this.options.retries) : 1;
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.once(method, path, options);
      } catch (error) {
        if (attempt >= attempts || !isRetryable(error)) throw error;
        const backoff = this.options.retryBaseMs * 2 ** (attempt - 1);
        const hinted = error instanceof LambdaApiError ? (error.retryAfterMs ?? 0) : 0;
        await pause(Math.min(this.options.retryMaxMs, Math.max(backoff, hinted)), options.signal, aborted);
      }
    }
  }

  private async once(method: string, path: string, options: CallOptions): Promise<unknown> {
    if (options.launch) await this.launchPacer.wait(options.signal, aborted);
    await this.pacer.wait(options.signal, aborted);

    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.options.apiKey}`,
      accept: 'application/json',
    };
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
      if (timeout.aborted) throw new LambdaTransportError('timeout', `no answer within ${this.options.timeoutMs} ms`);
      if (options.signal?.aborted) throw new LambdaTransportError('aborted', 'request aborted by the caller');
      throw new LambdaTransportError('network', (error as Error).message);
    }

    if (status >= 200 && status < 300) {
      try {
        return (JSON.parse(text) as { data?: unknown }).data;
      } catch {
        throw new LambdaApiError(status, null, 'success answer is not JSON', null);
      }
    }
    throw readEnvelopeError(status, text, retryAfterMs(retryAfter));
  }
}
