import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, operations, paths } from './schema.d.ts';

export type { components, operations, paths };
export type ApiClient = Client<paths>;

/** Any schema of the API by its name: `Schema<'InstanceOut'>`. */
export type Schema<Name extends keyof components['schemas']> = components['schemas'][Name];

export interface ApiClientOptions {
  /** Where the API is, e.g. http://localhost:8080 (no trailing path). */
  baseUrl: string;
  /** A bearer token from POST /v1/tokens or a sign-in; none for the public routes. */
  token?: string | null;
  /** Another fetch (tests, proxies). */
  fetch?: ClientOptions['fetch'];
  /** Sent with every request, e.g. a User-Agent. */
  headers?: Record<string, string>;
}

/**
 * A typed client of this API: paths, parameters, bodies and answers are the server's OpenAPI document's, as
 * generated into schema.d.ts (`npm run client:generate`). Errors are answers, not exceptions: `{ data, error,
 * response }`, with `error` the API's `{detail}`.
 */
export function createApiClient(options: ApiClientOptions): ApiClient {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers,
    ...(options.fetch && { fetch: options.fetch }),
  });
}
