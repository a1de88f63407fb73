/** GitHub's settings and how they are read from the environment: loaded without the HTTP client. */
import { envUrl, type Env } from '../../providers/provider-module.ts';

export interface GithubCodeHostConfig {
  /** The OAuth app's client id (public; the device flow needs no secret). */
  clientId: string;
  /** Default https://github.com: where /login/device/code and /login/oauth/access_token live. */
  githubUrl?: string;
  /** Default https://api.github.com: where /user and /user/emails live. */
  apiUrl?: string;
  /** Per request, default 10 000 ms. */
  timeoutMs?: number;
  /** Extra attempts for /user and /user/emails on a 5xx or lost answer, default 2. */
  retries?: number;
  /** First backoff delay, default 200 ms, doubling per attempt. */
  retryBaseMs?: number;
  /** Device codes remembered per process, default 10 000. */
  memoryLimit?: number;
  /** Milliseconds since the epoch, default Date.now (tests move it). */
  now?: () => number;
}

export const DEFAULT_GITHUB_URL = 'https://github.com';
export const DEFAULT_GITHUB_API_URL = 'https://api.github.com';

/** GitHub client ids: "Ov23li…" or 20 hex digits for OAuth apps, "Iv1.…" / "Iv23li…" for GitHub Apps. */
const CLIENT_ID = /^[A-Za-z0-9._-]{1,100}$/;

/**
 * GITHUB_CLIENT_ID enables GitHub sign-in (null without it); GITHUB_URL and GITHUB_API_URL move it (a GitHub
 * Enterprise Server, or a fake in tests). A URL without the client id is a half-made setup and stops the start.
 */
export function fromEnv(env: Env): GithubCodeHostConfig | null {
  const clientId = env.GITHUB_CLIENT_ID?.trim();
  const githubUrl = envUrl(env, 'GITHUB_URL');
  const apiUrl = envUrl(env, 'GITHUB_API_URL');
  if (!clientId) {
    const set = githubUrl ? 'GITHUB_URL' : apiUrl ? 'GITHUB_API_URL' : null;
    if (set) throw new Error(`${set}: set, but GITHUB_CLIENT_ID is not; set GITHUB_CLIENT_ID to enable GitHub sign-in`);
    return null;
  }
  if (!CLIENT_ID.test(clientId)) {
    throw new Error(`GITHUB_CLIENT_ID: must be the client id of a GitHub OAuth app (letters, digits, ".", "_", "-"), got "${clientId}"`);
  }
  return { clientId, githubUrl: githubUrl ?? DEFAULT_GITHUB_URL, apiUrl: apiUrl ?? DEFAULT_GITHUB_API_URL };
}
