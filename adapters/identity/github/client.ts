import { request } from 'undici';
import { pause } from '../../providers/shared/pacing.ts';

/** GitHub answered with an HTTP error (5xx anywhere, or a non-2xx of the REST API), or with a body we cannot read. */
export class GithubHttpError extends Error {
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.name = 'GithubHttpError';
    this.status = status;
  }
}

/** No HTTP answer at all: our timeout fired or the connection failed. */
export class GithubTransportError extends Error {
  readonly reason: 'timeout' | 'network';

  constructor(reason: 'timeout' | 'network', message: string) {
    super(message);
    this.name = 'GithubTransportError';
    this.reason = reason;
  }
}

export interface GithubClientOptions {
  /** Where the OAuth endpoints live: https://github.com (or a GitHub Enterprise Server host). */
  githubUrl: string;
  /** The REST API: https://api.github.com. */
  apiUrl: string;
  timeoutMs: number;
  /** Extra attempts for REST reads on a 5xx or a lost answer. OAuth posts are never repeated. */
  retries: number;
  retryBaseMs: number;
  userAgent: string;
}

/** An OAuth endpoint's answer below 500: GitHub puts its errors in the body, often under status 200. */
export interface OAuthAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** The REST API version we read (GitHub's documented default). */
const API_VERSION = '2022-11-28';

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const excerpt = (text: string): string => (text ? `: ${text.replace(/\s+/g, ' ').slice(0, 200)}` : '');

const isRetryable = (error: unknown): boolean =>
  error instanceof GithubTransportError || (error instanceof GithubHttpError && error.status >= 500);

/** GitHub's OAuth endpoints (form in, JSON out) and REST API (bearer token, JSON) over undici. */
export class GithubClient {
  private readonly options: GithubClientOptions;

  constructor(options: GithubClientOptions) {
    this.options = {
      ...options,
      githubUrl: options.githubUrl.replace(/\/+$/, ''),
      apiUrl: options.apiUrl.replace(/\/+$/, ''),
    };
  }

  /**
   * POST a form to an OAuth endpoint, asking for JSON (its default answer is form-encoded). Not retried:
   * a second device-code request starts a second flow, and a repeated token poll inside the interval
   * earns slow_down; the caller's next poll is the retry.
   */
  async postForm(path: string, fields: Record<string, string>): Promise<OAuthAnswer> {
    const { status, text } = await this.send(`${this.options.githubUrl}${path}`, {
      method: 'POST',
      headers: {
        accept: 'application/json',
        'content-type': 'application/x-www-form-urlencoded',
        'user-agent': this.options.userAgent,
      },
      body: new URLSearchParams(fields).toString(),
    });
    if (status >= 500) throw new GithubHttpError(status, `POST ${path}: HTTP ${status}${excerpt(text)}`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (!isObject(body)) throw new GithubHttpError(status, `POST ${path}: HTTP ${status}, not a JSON object${excerpt(text)}`);
    return { status, body };
  }

  /** GET a REST resource as the user the token belongs to; reads are retried on a 5xx or a lost answer. */
  async getJson(path: string, accessToken: string): Promise<unknown> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await this.getOnce(path, accessToken);
      } catch (error) {
        if (attempt >= this.options.retries || !isRetryable(error)) throw error;
        await pause(this.options.retryBaseMs * 2 ** attempt, undefined, () => new Error('aborted'));
      }
    }
  }

  private async getOnce(path: string, accessToken: string): Promise<unknown> {
    const { status, text } = await this.send(`${this.options.apiUrl}${path}`, {
      method: 'GET',
      headers: {
        accept: 'application/vnd.github+json',
        authorization: `Bearer ${accessToken}`,
        'x-github-api-version': API_VERSION,
        // GitHub refuses REST requests without a User-Agent (403)
        'user-agent': this.options.userAgent,
      },
    });
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new GithubHttpError(status, `GET ${path}: HTTP ${status}, not JSON${excerpt(text)}`);
    }
    if (status >= 200 && status < 300) return body;
    const message = isObject(body) && typeof body.message === 'string' ? body.message : `HTTP ${status}`;
    throw new GithubHttpError(status, `GET ${path}: HTTP ${status}: ${message}`);
  }

  private async send(
    url: string,
    init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string },
  ): Promise<{ status: number; text: string }> {
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    try {
      const response = await request(url, { ...init, signal });
      return { status: response.statusCode, text: await response.body.text() };
    } catch (error) {
      if (signal.aborted) throw new GithubTransportError('timeout', `${init.method} ${new URL(url).pathname}: no answer within ${this.options.timeoutMs} ms`);
      throw new GithubTransportError('network', `${init.method} ${new URL(url).pathname}: ${(error as Error).message}`);
    }
  }
}
