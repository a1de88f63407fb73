import type { Clock } from '../../../core/ports/clock.ts';
import type { Mailer } from '../../../core/ports/mailer.ts';
import { BuiltinIdentity, type MailErrorReporter } from './adapter.ts';
import { SqlBuiltinStore, type BuiltinDatabase } from './sql-store.ts';

export { BuiltinIdentity, NEW_PASSWORD_SESSION_TTL_MS, type MailErrorReporter } from './adapter.ts';
export { CLIENT_ID, redirectWithCode, RedirectPolicy, type AuthorizationRequest } from './authorization-request.ts';
export type { BuiltinDatabase } from './sql-store.ts';

export type Env = Record<string, string | undefined>;

export interface BuiltinIdentityConfig {
  /** Redirect URIs the hosted sign-in page may send codes to besides this server's origin and loopback. */
  redirectUris: string[];
}

/**
 * The built-in identity provider on the control plane's database (migration 0008). `publicUrl`: where this
 * server is reached (the sign-in page's address). `onMailError`: told of each mail that failed to leave.
 */
export function createBuiltinIdentity(options: {
  database: BuiltinDatabase;
  clock: Clock;
  mailer: Mailer;
  publicUrl: string;
  redirectUris?: readonly string[];
  onMailError?: MailErrorReporter;
}): BuiltinIdentity {
  const { database, ...rest } = options;
  return new BuiltinIdentity({ ...rest, store: new SqlBuiltinStore(database) });
}

/**
 * AUTH_REDIRECT_URIS: a comma-separated list of absolute http(s) URIs (no fragment, no credentials) the
 * hosted sign-in page may redirect to. The built-in provider is always available, so this never answers null.
 */
export function fromEnv(env: Env): BuiltinIdentityConfig {
  const text = env.AUTH_REDIRECT_URIS ?? '';
  const redirectUris = text.split(',').map((uri) => uri.trim()).filter(Boolean);
  for (const uri of redirectUris) {
    let url: URL | null = null;
    try {
      url = new URL(uri);
    } catch {
      // reported below
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || uri.includes('#') || url.username || url.password) {
      throw new Error(`AUTH_REDIRECT_URIS: each entry must be an absolute http(s) URI without a fragment or credentials, got "${uri}"`);
    }
  }
  return { redirectUris };
}
