import { sessionToken, setSession } from './session.ts';

/** An API error as the person should read it: the API's own `detail`. */
export interface ApiError {
  status: number;
  detail: string;
}

export type Result<T> = { data: T; error?: undefined } | { data?: undefined; error: ApiError };

type Query = Record<string, string | number | boolean | undefined | null>;

/**
 * The public API, nothing else: same origin, the console session as bearer. A 401 on a session ends it (revoked
 * or expired), which sends the person to sign in.
 */
export async function call<T>(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, options: { query?: Query; body?: unknown } = {}): Promise<Result<T>> {
  const url = new URL(path, location.origin);
  for (const [key, value] of Object.entries(options.query ?? {})) if (value !== undefined && value !== null && value !== '') url.searchParams.set(key, String(value));
  const headers: Record<string, string> = { accept: 'application/json' };
  const token = sessionToken();
  if (token) headers.authorization = `Bearer ${token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(url, { method, headers, body: options.body === undefined ? null : JSON.stringify(options.body), credentials: 'omit', referrerPolicy: 'no-referrer' });
  } catch {
    return { error: { status: 0, detail: 'the server could not be reached; check the connection and try again' } };
  }
  const text = await response.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  if (!response.ok) {
    if (response.status === 401 && token) setSession(null);
    const detail = typeof (parsed as { detail?: unknown })?.detail === 'string' ? (parsed as { detail: string }).detail : `${response.status} ${response.statusText}`;
    return { error: { status: response.status, detail } };
  }
  return { data: parsed as T };
}

export const get = <T>(path: string, query?: Query) => call<T>('GET', path, query ? { query } : {});
export const post = <T>(path: string, body?: unknown) => call<T>('POST', path, body === undefined ? {} : { body });
export const put = <T>(path: string, body?: unknown) => call<T>('PUT', path, { body });
export const del = <T = void>(path: string) => call<T>('DELETE', path);
