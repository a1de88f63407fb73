import { Pacer } from '../shared/pacing.ts';
import { isRetryable as retryableStatus, isSuccess, rawErrorMessage, UpstreamApiError, UpstreamHttp, UpstreamTransportError, type UpstreamCallOptions, type UpstreamHttpOptions } from '../shared/upstream-http.ts';

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
export class LambdaApiError extends UpstreamApiError {
  /** A documented code, or the raw text of an undocumented one, or null when the body had no envelope. */
  readonly code: LambdaErrorCode | string | null;
  readonly suggestion: string | null;

  /** `retryAfterMs`: the server's Retry-After, when it sent one (Lambda's 429s are not documented to). */
  constructor(status: number, code: string | null, message: string, suggestion: string | null, retryAfterMs: number | null = null) {
    super(status, message, retryAfterMs);
    this.code = code;
    this.suggestion = suggestion;
  }

  get documented(): boolean {
    return this.code !== null && isKnownCode(this.code);
  }
}

/** No HTTP answer at all: our timeout fired, the caller aborted, or the connection failed. */
export class LambdaTransportError extends UpstreamTransportError {}

/** `minIntervalMs`: Lambda allows about 1 request per second. */
export interface LambdaClientOptions extends UpstreamHttpOptions {
  apiKey: string;
  /** Spacing between two launches (Lambda allows 1 per 12 seconds). */
  launchIntervalMs: number;
}

export interface CallOptions extends UpstreamCallOptions {
  /** Subject to the launch spacing as well as the general one. */
  launch?: boolean;
}

/** 429, 5xx and Lambda's `provider/...` upstream errors are worth another try; a lost answer too. */
const isRetryable = (error: unknown): boolean => retryableStatus(error) || (error instanceof LambdaApiError && (error.code?.startsWith('provider/') ?? false));

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
  return new LambdaApiError(status, null, rawErrorMessage(status, text), null, retryAfter);
};

/** The Lambda Cloud REST API over undici: auth, envelope, the launch spacing (pacing, timeouts, retries: shared/upstream-http.ts). */
export class LambdaClient {
  private readonly apiKey: string;
  private readonly http: UpstreamHttp;
  private readonly launchPacer: Pacer;

  constructor(options: LambdaClientOptions) {
    this.apiKey = options.apiKey;
    this.http = new UpstreamHttp(options, { transport: (reason, message) => new LambdaTransportError(reason, message), retryable: isRetryable });
    this.launchPacer = new Pacer(options.launchIntervalMs);
  }

  /** The `data` payload of a successful answer (still unvalidated: mapping.ts owns the wire shapes). */
  call(method: 'GET' | 'POST' | 'DELETE', path: string, options: CallOptions): Promise<unknown> {
    return this.http.retrying(options.idempotent, options.signal, async () => {
      const answer = await this.http.send({
        method,
        path,
        headers: { authorization: `Bearer ${this.apiKey}`, accept: 'application/json' },
        body: options.body,
        signal: options.signal,
        ...(options.launch && { pacer: this.launchPacer }),
      });
      if (!isSuccess(answer)) throw readEnvelopeError(answer.status, answer.text, answer.retryAfterMs);
      try {
        return (JSON.parse(answer.text) as { data?: unknown }).data;
      } catch {
        throw new LambdaApiError(answer.status, null, 'success answer is not JSON', null);
      }
    });
  }
}
