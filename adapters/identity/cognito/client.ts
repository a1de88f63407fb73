import {
  AdminCreateUserCommand,
  AdminDeleteUserCommand,
  AdminGetUserCommand,
  CognitoIdentityProviderClient,
  ConfirmForgotPasswordCommand,
  ConfirmSignUpCommand,
  ForgotPasswordCommand,
  InitiateAuthCommand,
  ResendConfirmationCodeCommand,
  RespondToAuthChallengeCommand,
  SignUpCommand,
  type AuthenticationResultType,
  type ChallengeNameType,
} from '@aws-sdk/client-cognito-identity-provider';
import { request } from 'undici';
import { secretHash } from './mapping.ts';

export interface CognitoClientOptions {
  region: string;
  userPoolId: string;
  clientId: string;
  clientSecret: string | null;
  /** The user pool API's base URL; null for the SDK's regional endpoint. */
  endpoint: string | null;
  /** The hosted UI's base URL (custom or Cognito-prefixed domain), or null when there is none. */
  domain: string | null;
  /** For AdminCreateUser only; null for the SDK's default credential chain. */
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | null;
  timeoutMs: number;
  /** The SDK's attempts per call (it retries throttling, 5xx and lost connections with backoff). */
  maxAttempts: number;
}

/** What InitiateAuth or RespondToAuthChallenge answered: tokens, or one more challenge. */
export type AuthAnswer =
  | { kind: 'tokens'; idToken: string }
  | { kind: 'challenge'; name: ChallengeNameType | string; session: string; parameters: Record<string, string> };

/** The hosted UI's token endpoint answered with an OAuth error (RFC 6749 5.2). */
export class HostedUiError extends Error {
  readonly status: number;
  /** `error` of the body ("invalid_grant", "invalid_client", ...), or null when the body had none. */
  readonly code: string | null;

  constructor(status: number, code: string | null, message: string) {
    super(message);
    this.name = 'HostedUiError';
    this.status = status;
    this.code = code;
  }
}

const toAuthAnswer = (result: AuthenticationResultType | undefined, challenge: {
  ChallengeName?: string | undefined;
  Session?: string | undefined;
  ChallengeParameters?: Record<string, string> | undefined;
}): AuthAnswer => {
  if (result?.IdToken) return { kind: 'tokens', idToken: result.IdToken };
  if (challenge.ChallengeName && challenge.Session) {
    return { kind: 'challenge', name: challenge.ChallengeName, session: challenge.Session, parameters: challenge.ChallengeParameters ?? {} };
  }
  throw new Error('Cognito answered without tokens and without a challenge (does the app client allow the openid scope?)');
};

/**
 * The Cognito user pool API through the official SDK (JSON 1.1: POST / with X-Amz-Target
 * AWSCognitoIdentityProviderService.<Operation>), plus the hosted UI's /oauth2/token. Every client-side
 * call carries SECRET_HASH when the app client has a secret; only AdminCreateUser and AdminGetUser are
 * signed with AWS credentials (the SDK sends the others unsigned, as the API wants).
 */
export class CognitoClient {
  private readonly options: CognitoClientOptions;
  private readonly sdk: CognitoIdentityProviderClient;

  constructor(options: CognitoClientOptions) {
    this.options = options;
    this.sdk = new CognitoIdentityProviderClient({
      region: options.region,
      ...(options.endpoint && { endpoint: options.endpoint }),
      ...(options.credentials && { credentials: options.credentials }),
      maxAttempts: options.maxAttempts,
      requestHandler: { requestTimeout: options.timeoutMs, connectionTimeout: options.timeoutMs },
    });
  }

  /** SECRET_HASH for this username, or undefined for an app client without a secret. */
  private hash(username: string): string | undefined {
    return this.options.clientSecret === null ? undefined : secretHash(this.options.clientSecret, username, this.options.clientId);
  }

  private signal(): AbortSignal {
    // the SDK's requestTimeout covers one attempt; this bounds the whole call, retries included
    return AbortSignal.timeout(this.options.timeoutMs * this.options.maxAttempts + 1_000);
  }

  async signUp(email: string, password: string): Promise<void> {
    await this.sdk.send(
      new SignUpCommand({
        ClientId: this.options.clientId,
        SecretHash: this.hash(email),
        Username: email,
        Password: password,
        UserAttributes: [{ Name: 'email', Value: email }],
      }),
      { abortSignal: this.signal() },
    );
  }

  async confirmSignUp(email: string, code: string): Promise<void> {
    await this.sdk.send(
      new ConfirmSignUpCommand({ ClientId: this.options.clientId, SecretHash: this.hash(email), Username: email, ConfirmationCode: code }),
      { abortSignal: this.signal() },
    );
  }

  async resendConfirmationCode(email: string): Promise<void> {
    await this.sdk.send(
      new ResendConfirmationCodeCommand({ ClientId: this.options.clientId, SecretHash: this.hash(email), Username: email }),
      { abortSignal: this.signal() },
    );
  }

  async initiatePasswordAuth(email: string, password: string): Promise<AuthAnswer> {
    const secret = this.hash(email);
    const answer = await this.sdk.send(
      new InitiateAuthCommand({
        AuthFlow: 'USER_PASSWORD_AUTH',
        ClientId: this.options.clientId,
        AuthParameters: { USERNAME: email, PASSWORD: password, ...(secret && { SECRET_HASH: secret }) },
      }),
      { abortSignal: this.signal() },
    );
    return toAuthAnswer(answer.AuthenticationResult, answer);
  }

  /** `internalUsername`: the challenge's USER_ID_FOR_SRP, which SECRET_HASH must be computed with. */
  async respondNewPassword(internalUsername: string, session: string, newPassword: string): Promise<AuthAnswer> {
    const secret = this.hash(internalUsername);
    const answer = await this.sdk.send(
      new RespondToAuthChallengeCommand({
        ChallengeName: 'NEW_PASSWORD_REQUIRED',
        ClientId: this.options.clientId,
        Session: session,
        ChallengeResponses: { USERNAME: internalUsername, NEW_PASSWORD: newPassword, ...(secret && { SECRET_HASH: secret }) },
      }),
      { abortSignal: this.signal() },
    );
    return toAuthAnswer(answer.AuthenticationResult, answer);
  }

  async forgotPassword(email: string): Promise<void> {
    await this.sdk.send(
      new ForgotPasswordCommand({ ClientId: this.options.clientId, SecretHash: this.hash(email), Username: email }),
      { abortSignal: this.signal() },
    );
  }

  async confirmForgotPassword(email: string, code: string, newPassword: string): Promise<void> {
    await this.sdk.send(
      new ConfirmForgotPasswordCommand({
        ClientId: this.options.clientId,
        SecretHash: this.hash(email),
        Username: email,
        ConfirmationCode: code,
        Password: newPassword,
      }),
      { abortSignal: this.signal() },
    );
  }

  /**
   * An invited user: Cognito makes the temporary password and mails it with the pool's invitation
   * template. The address counts as verified, so a forgotten temporary password can be reset later.
   * Returns the new user's `sub`.
   */
  async adminCreateUser(email: string, options: { suppress?: boolean } = {}): Promise<string> {
    const answer = await this.sdk.send(
      new AdminCreateUserCommand({
        UserPoolId: this.options.userPoolId,
        Username: email,
        UserAttributes: [
          { Name: 'email', Value: email },
          { Name: 'email_verified', Value: 'true' },
        ],
        // SUPPRESS: the user is made and nothing is mailed (an invitation again later sends the mail)
        ...(options.suppress ? { MessageAction: 'SUPPRESS' as const } : { DesiredDeliveryMediums: ['EMAIL' as const] }),
      }),
      { abortSignal: this.signal() },
    );
    const sub = answer.User?.Attributes?.find((attribute) => attribute.Name === 'sub')?.Value;
    if (!sub) throw new Error('Cognito AdminCreateUser answered without the new user\'s sub');
    return sub;
  }

  /** Deletes the user (AdminDeleteUser, signed): how an invitation takes over a sign-up nobody confirmed. */
  async adminDeleteUser(email: string): Promise<void> {
    await this.sdk.send(new AdminDeleteUserCommand({ UserPoolId: this.options.userPoolId, Username: email }), { abortSignal: this.signal() });
  }

  /**
   * A pending invitation sent again (AdminCreateUser with MessageAction RESEND): Cognito makes a fresh
   * temporary password, valid TemporaryPasswordValidityDays again, and mails it. Cognito refuses it
   * (UnsupportedUserStateException) unless the user is still FORCE_CHANGE_PASSWORD. Returns the user's `sub`.
   */
  async adminResendInvitation(email: string): Promise<string> {
    const answer = await this.sdk.send(
      new AdminCreateUserCommand({ UserPoolId: this.options.userPoolId, Username: email, MessageAction: 'RESEND', DesiredDeliveryMediums: ['EMAIL'] }),
      { abortSignal: this.signal() },
    );
    const sub = answer.User?.Attributes?.find((attribute) => attribute.Name === 'sub')?.Value;
    if (!sub) throw new Error('Cognito AdminCreateUser (RESEND) answered without the user\'s sub');
    return sub;
  }

  /** The user's `sub`, address and status (AdminGetUser, signed like AdminCreateUser). */
  async adminGetUser(email: string): Promise<{ sub: string; email: string | null; status: string | null }> {
    const answer = await this.sdk.send(new AdminGetUserCommand({ UserPoolId: this.options.userPoolId, Username: email }), { abortSignal: this.signal() });
    const attribute = (name: string) => answer.UserAttributes?.find((a) => a.Name === name)?.Value;
    const sub = attribute('sub');
    if (!sub) throw new Error('Cognito AdminGetUser answered without the user\'s sub');
    return { sub, email: attribute('email') ?? null, status: answer.UserStatus ?? null };
  }

  /**
   * The hosted UI's token endpoint: an authorization code (with its PKCE verifier) for tokens. A client
   * with a secret authenticates with HTTP Basic, as Cognito documents; a public one sends client_id only.
   */
  async exchangeCode(domain: string, code: string, redirectUri: string, codeVerifier: string | null): Promise<string> {
    const form = new URLSearchParams({ grant_type: 'authorization_code', client_id: this.options.clientId, code, redirect_uri: redirectUri });
    if (codeVerifier) form.set('code_verifier', codeVerifier);
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    if (this.options.clientSecret !== null) {
      headers.authorization = `Basic ${Buffer.from(`${this.options.clientId}:${this.options.clientSecret}`).toString('base64')}`;
    }
    const response = await request(`${domain}/oauth2/token`, {
      method: 'POST',
      headers,
      body: form.toString(),
      signal: AbortSignal.timeout(this.options.timeoutMs),
    });
    const text = await response.body.text();
    let body: Record<string, unknown> | null = null;
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === 'object') body = parsed as Record<string, unknown>;
    } catch {
      // a proxy page or an empty body: keep the status
    }
    if (response.statusCode !== 200) {
      const error = typeof body?.error === 'string' ? body.error : null;
      const description = typeof body?.error_description === 'string' ? `: ${body.error_description}` : '';
      throw new HostedUiError(response.statusCode, error, `token endpoint answered ${response.statusCode}${error ? ` ${error}` : ''}${description}`);
    }
    if (typeof body?.id_token !== 'string') {
      throw new Error('the hosted UI answered without an id_token: the app client must allow the openid scope');
    }
    return body.id_token;
  }

  destroy(): void {
    this.sdk.destroy();
  }
}
