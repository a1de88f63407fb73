import { createApiClient, type ApiClient } from '../../client/api-client.ts';
import { onSessionChange, sessionToken, setSession } from './session.ts';

/** An API error as the person should read it: the API's own `detail`. */
export interface ApiError {
  status: number;
  detail: string;
}

export type Result<T> = { data: T; error?: undefined } | { data?: undefined; error: ApiError };

/**
 * The typed client generated from /openapi.json (hosts/client), same origin, the console session as bearer; a
 * new one when the session changes. A 401 on a session ends it (revoked or expired): the person signs in again.
 */
let client: ApiClient = make();
onSessionChange(() => (client = make()));

/** A client with another bearer than the tab's current session (the sessions held in the person's other tenants). */
export function clientFor(token: string | null): ApiClient {
  return createApiClient({ baseUrl: location.origin, token, fetch: (request) => fetch(request, { credentials: 'omit', referrerPolicy: 'no-referrer' }) });
}

function make(): ApiClient {
  const token = sessionToken();
  const made = clientFor(token);
  made.use({
    onResponse({ response }) {
      if (response.status === 401 && token && sessionToken() === token) setSession(null);
    },
  });
  return made;
}

export const api = (): ApiClient => client;

/**
 * One call's answer as the pages use it: the data, or the error with the API's `detail` (a network failure too).
 * A 204 answers `data: undefined`.
 */
export async function run<T>(request: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<Result<T>> {
  try {
    const { data, error, response } = await request;
    if (response.ok) return { data: data as T };
    const detail = typeof (error as { detail?: unknown } | undefined)?.detail === 'string' ? (error as { detail: string }).detail : `${response.status} ${response.statusText}`;
    return { error: { status: response.status, detail } };
  } catch {
    return { error: { status: 0, detail: 'the server could not be reached; check the connection and try again' } };
  }
}
