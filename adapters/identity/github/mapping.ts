import { z } from 'zod';
import type { DevicePoll, DeviceStart } from '../../../core/ports/code-host.ts';
import type { IdentityRef } from '../../../core/ports/identity.ts';
import type { OAuthAnswer } from './client.ts';

export const PROVIDER = 'github';
/** The profile (id, login) and the addresses with their verified flags; nothing that reaches code. */
export const SCOPE = 'read:user user:email';
export const DEVICE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';
/** RFC 8628 §3.2: a client without an `interval` waits 5 seconds. */
export const DEFAULT_INTERVAL_SECONDS = 5;
/** RFC 8628 §3.5 and GitHub: slow_down adds 5 seconds to the interval, for this and every later poll. */
export const SLOW_DOWN_STEP_SECONDS = 5;

/**
 * GitHub refused the flow for a reason no poll outcome describes: our configuration (unknown client id,
 * device flow not enabled on the app) or our request. An operator must act; the host answers 503.
 */
export class GithubOAuthError extends Error {
  readonly code: string;
  readonly status: number;

  constructor(code: string, status: number, message: string) {
    super(message);
    this.name = 'GithubOAuthError';
    this.code = code;
    this.status = status;
  }
}

// ---- wire shapes (only the fields we read) ----

/** Whole seconds, as a JSON number or, in GitHub's form-encoded habit, a numeric string. */
const seconds = z
  .union([z.number(), z.string().regex(/^\d+$/).transform(Number)])
  .pipe(z.number().int().positive());

const deviceCodeSchema = z.object({
  device_code: z.string().min(1),
  user_code: z.string().min(1),
  verification_uri: z.string().min(1),
  expires_in: seconds,
  interval: seconds.optional(),
});

export const userSchema = z.object({
  // GitHub's stable key; z.int() keeps it a safe integer, so String(id) is exact
  id: z.int().positive(),
  login: z.string(),
});
export type GithubUser = z.infer<typeof userSchema>;

export const emailsSchema = z.array(
  z.object({
    email: z.string(),
    primary: z.boolean(),
    verified: z.boolean(),
  }),
);
export type GithubEmail = z.infer<typeof emailsSchema>[number];

// ---- OAuth answers ----

const describe = (body: Record<string, unknown>): string =>
  typeof body.error_description === 'string' ? ` (${body.error_description})` : '';

/** What an OAuth error that is not a poll outcome tells the operator to fix. */
export const oauthFailure = (code: string, status: number, body: Record<string, unknown>): GithubOAuthError => {
  const said = `${code}${describe(body)}`;
  switch (code) {
    case 'device_flow_disabled':
    case 'unauthorized_client':
      return new GithubOAuthError(code, status, `GitHub refuses the device flow for this app (${said}): enable "Device Flow" in the settings of the OAuth app GITHUB_CLIENT_ID names`);
    case 'incorrect_client_credentials':
      return new GithubOAuthError(code, status, `GitHub does not accept the client id (${said}): check GITHUB_CLIENT_ID`);
    default:
      return new GithubOAuthError(code, status, `GitHub refused the device flow request: ${said}`);
  }
};

/** POST /login/device/code -> DeviceStart; GitHub's refusals throw GithubOAuthError. */
export const toDeviceStart = ({ status, body }: OAuthAnswer): DeviceStart => {
  // an unknown client id: 404 {"error":"Not Found"}, no OAuth error code
  if (status === 404) throw new GithubOAuthError('not_found', status, 'GitHub does not know the client id (404): check GITHUB_CLIENT_ID');
  if (typeof body.error === 'string') throw oauthFailure(body.error, status, body);
  const parsed = deviceCodeSchema.safeParse(body);
  if (status !== 200 || !parsed.success) {
    throw new GithubOAuthError('unreadable', status, `GitHub's device code answer (HTTP ${status}) is not one we can read: ${parsed.error?.issues[0]?.message ?? 'unexpected status'}`);
  }
  return {
    deviceCode: parsed.data.device_code,
    userCode: parsed.data.user_code,
    verificationUri: parsed.data.verification_uri,
    expiresIn: parsed.data.expires_in,
    interval: parsed.data.interval ?? DEFAULT_INTERVAL_SECONDS,
  };
};

/** A poll that has not ended in a token: every DevicePoll but `complete`. */
export type PollWithoutToken = Exclude<DevicePoll, { status: 'complete' }>;

export type TokenAnswer = { accessToken: string } | PollWithoutToken;

/**
 * POST /login/oauth/access_token -> a token or what to tell the poller. GitHub answers these errors with
 * HTTP 200 and an `error` field, so the field decides, not the status. `lastInterval` is the interval the
 * poller was told before, used only if a slow_down ever comes without GitHub's new `interval`.
 */
export const readTokenAnswer = ({ status, body }: OAuthAnswer, lastInterval: number): TokenAnswer => {
  if (typeof body.access_token === 'string' && body.access_token !== '') return { accessToken: body.access_token };
  const code = body.error;
  if (typeof code !== 'string') {
    throw new GithubOAuthError('unreadable', status, `GitHub's token answer (HTTP ${status}) has neither access_token nor error`);
  }
  switch (code) {
    case 'authorization_pending':
      return { status: 'pending' };
    case 'slow_down': {
      const sent = seconds.safeParse(body.interval);
      return { status: 'slow_down', interval: sent.success ? sent.data : lastInterval + SLOW_DOWN_STEP_SECONDS };
    }
    // GitHub's table names the code expired_token and its text token_expired: both mean the same
    case 'expired_token':
    case 'token_expired':
    // a device code GitHub no longer knows (already used, or lost on its side): the flow must start again
    case 'incorrect_device_code':
      return { status: 'expired' };
    case 'access_denied':
      return { status: 'denied' };
    default:
      throw oauthFailure(code, status, body);
  }
};

// ---- the person ----

/** The address GitHub marks primary, when it is verified too; otherwise none (a secondary is never used). */
export const primaryVerifiedEmail = (emails: readonly GithubEmail[]): string | null =>
  emails.find((e) => e.primary && e.verified)?.email ?? null;

/** The identity is GitHub's numeric user id; the login can be renamed and is never the key (it is shown). */
export const toIdentity = (user: GithubUser, email: string | null): IdentityRef => ({
  provider: PROVIDER,
  subject: String(user.id),
  email,
  login: user.login,
});
