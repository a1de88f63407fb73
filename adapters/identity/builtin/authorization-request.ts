import { PKCE_VALUE } from './tokens.ts';

/** The one client of the hosted page: our console and CLI, public clients that prove themselves with PKCE. */
export const CLIENT_ID = 'gpu-control-plane';
export const AUTHORIZATION_CODE_TTL_MS = 5 * 60_000;
const STATE_MAX = 1_024;

/** A checked request of GET /auth/authorize: where to send the code, and what binds it. */
export interface AuthorizationRequest {
  redirectUri: string;
  /** Sent back unchanged with the code; optional, PKCE already binds the code to the client that asked. */
  state: string | null;
  codeChallenge: string;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Where the page may send a code: this server's own origin (the console), a loopback address on any port
 * (RFC 8252 §7.3: the CLI listens on a port of its choosing), and each URI configured (AUTH_REDIRECT_URIS),
 * matched exactly. Never a URI with a fragment or credentials.
 */
export class RedirectPolicy {
  private readonly origin: string;
  private readonly listed: ReadonlySet<string>;

  constructor(publicUrl: string, configured: readonly string[] = []) {
    this.origin = new URL(publicUrl).origin;
    this.listed = new Set(configured.map((uri) => new URL(uri).href));
  }

  allows(uri: string): boolean {
    let url: URL;
    try {
      url = new URL(uri);
    } catch {
      return false;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
    if (uri.includes('#') || url.username || url.password) return false;
    if (this.listed.has(url.href)) return true;
    if (url.origin === this.origin) return true;
    return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
  }
}

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/**
 * Reads the OAuth query of the hosted page. A problem is shown on the page itself: nothing is sent to a
 * redirect URI before it is known to be allowed.
 */
export function readAuthorizationRequest(query: Record<string, unknown>, policy: RedirectPolicy): { request: AuthorizationRequest } | { problem: string } {
  const redirectUri = text(query.redirect_uri);
  if (!redirectUri) return { problem: 'redirect_uri is missing: the application that sent you here must name where to return' };
  if (!policy.allows(redirectUri)) return { problem: `redirect_uri is not allowed here: use this server's own address, a loopback address (http://127.0.0.1:<port>/…), or one listed in AUTH_REDIRECT_URIS` };
  if (text(query.client_id) !== CLIENT_ID) return { problem: `client_id must be "${CLIENT_ID}"` };
  if (text(query.response_type) !== 'code') return { problem: 'response_type must be "code"' };
  if (text(query.code_challenge_method) !== 'S256') return { problem: 'code_challenge_method must be "S256": PKCE is required' };
  const codeChallenge = text(query.code_challenge);
  if (!codeChallenge || !PKCE_VALUE.test(codeChallenge)) return { problem: 'code_challenge must be the base64url SHA-256 of the code verifier (43 characters)' };
  const state = query.state === undefined ? null : text(query.state);
  if (state === undefined || (state !== null && state.length > STATE_MAX)) return { problem: `state must be one text value of at most ${STATE_MAX} characters` };
  return { request: { redirectUri, state, codeChallenge } };
}

/** Where the browser goes with the code: the redirect URI with `code` and `state` added to its query. */
export function redirectWithCode(request: AuthorizationRequest, code: string): string {
  const url = new URL(request.redirectUri);
  url.searchParams.append('code', code);
  if (request.state !== null) url.searchParams.append('state', request.state);
  return url.href;
}
