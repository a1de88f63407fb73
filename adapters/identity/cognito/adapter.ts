import { DomainError, invalidInput, rateLimited, upstreamUnavailable } from '../../../core/errors.ts';
import type { CodeSent, Identity, IdentityRef, SignInOutcome } from '../../../core/ports/identity.ts';
import { HostedUiError, type AuthAnswer, type CognitoClient } from './client.ts';
import type { IdTokenVerifier } from './jwks.ts';
import {
  PROVIDER,
  THROTTLE_RETRY_SECONDS,
  exceptionName,
  identityFromClaims,
  isSilentForCodeSent,
  maskEmail,
  packSession,
  toDomainError,
  unpackSession,
  type Operation,
} from './mapping.ts';

export interface CognitoPublicSettings {
  region: string;
  userPoolId: string;
  clientId: string;
  /** The hosted UI's base URL, or null. */
  domain: string | null;
}

/**
 * An Amazon Cognito user pool as the Identity port. The pool's username is the email
 * address; Cognito sends the codes and the invitation itself. Every identity comes from an id token
 * verified against the pool's JWKS, whether InitiateAuth, the new-password challenge or the hosted UI
 * handed it over.
 */
export class CognitoIdentity implements Identity {
  readonly name = PROVIDER;
  private readonly client: CognitoClient;
  private readonly verifier: IdTokenVerifier;
  private readonly settings: CognitoPublicSettings;

  constructor(client: CognitoClient, verifier: IdTokenVerifier, settings: CognitoPublicSettings) {
    this.client = client;
    this.verifier = verifier;
    this.settings = settings;
  }

  publicConfig(): Record<string, unknown> {
    const { region, userPoolId, clientId, domain } = this.settings;
    return {
      kind: PROVIDER,
      region,
      user_pool_id: userPoolId,
      client_id: clientId,
      domain,
      authorize_url: domain ? `${domain}/oauth2/authorize` : null,
    };
  }

  async signUp(email: string, password: string): Promise<CodeSent> {
    return this.codeSent('signUp', email, () => this.client.signUp(email, password));
  }

  async confirmEmail(email: string, code: string): Promise<void> {
    await this.call('confirmSignUp', () => this.client.confirmSignUp(email, code));
  }

  async resendCode(email: string): Promise<CodeSent> {
    return this.codeSent('resendConfirmationCode', email, () => this.client.resendConfirmationCode(email));
  }

  async signIn(email: string, password: string): Promise<SignInOutcome> {
    const answer = await this.call('signIn', () => this.client.initiatePasswordAuth(email, password));
    if (answer.kind === 'challenge' && answer.name === 'NEW_PASSWORD_REQUIRED') {
      const internalUsername = answer.parameters.USER_ID_FOR_SRP || email;
      return { kind: 'new_password_required', session: packSession(internalUsername, answer.session) };
    }
    return { kind: 'signed_in', identity: await this.identityOf(answer) };
  }

  async completeNewPassword(email: string, session: string, newPassword: string): Promise<IdentityRef> {
    const unpacked = unpackSession(session);
    if (!unpacked) throw invalidInput(['body', 'session'], 'not a session from a sign-in that answered new_password_required');
    const answer = await this.call('newPassword', () =>
      this.client.respondNewPassword(unpacked.internalUsername, unpacked.cognitoSession, newPassword),
    );
    const identity = await this.identityOf(answer);
    // the session names the user; an address that is not theirs must not complete someone else's sign-in
    if (identity.email !== null && identity.email.toLowerCase() !== email.trim().toLowerCase()) {
      throw new DomainError('INVALID_CREDENTIALS', 'the session belongs to another email address: sign in again');
    }
    return identity;
  }

  async forgotPassword(email: string): Promise<CodeSent> {
    return this.codeSent('forgotPassword', email, () => this.client.forgotPassword(email));
  }

  /**
   * ConfirmForgotPassword answers nothing about the user, so AdminGetUser names them afterwards (asked
   * before, it would tell apart an unknown address). If that fails the password is set all the same: the
   * answer is an outage saying so, since the person's earlier sessions could not be ended.
   */
  async resetPassword(email: string, code: string, newPassword: string): Promise<IdentityRef> {
    await this.call('confirmForgotPassword', () => this.client.confirmForgotPassword(email, code, newPassword));
    try {
      const user = await this.client.adminGetUser(email);
      return { provider: PROVIDER, subject: user.sub, email: user.email ?? email };
    } catch (error) {
      throw upstreamUnavailable(
        'the new password is set, but Cognito did not say whose it is (AdminGetUser), so earlier console sessions were not ended',
        toDomainError('adminGetUser', error),
        'sign in with the new password and revoke the sessions you do not know (GET /v1/tokens, DELETE /v1/tokens/{id})',
      );
    }
  }

  async exchangeCode(request: { code: string; redirectUri: string | null; codeVerifier: string | null }): Promise<IdentityRef> {
    const domain = this.settings.domain;
    if (!domain) throw new DomainError('CONFLICT', 'Cognito\'s hosted UI is not configured here: set COGNITO_DOMAIN to use the code exchange');
    if (!request.redirectUri) {
      throw invalidInput(['body', 'redirect_uri'], 'Cognito needs the redirect_uri the hosted UI sent the code to');
    }
    let idToken: string;
    try {
      idToken = await this.client.exchangeCode(domain, request.code, request.redirectUri, request.codeVerifier);
    } catch (error) {
      throw hostedUiFailure(error);
    }
    return identityFromClaims(await this.verifier.verify(idToken));
  }

  /**
   * A new user; the address invited before and still FORCE_CHANGE_PASSWORD: the invitation sent again; an
   * address that signed up and never confirmed (UNCONFIRMED): taken over, its user deleted and made anew by the
   * invitation (whoever signed up loses it). With `mail: false` nothing is mailed (SUPPRESS; a pending
   * invitation is left as it is, since Cognito's RESEND always mails).
   */
  async invite(email: string, options: { mail?: boolean } = {}): Promise<IdentityRef> {
    const suppress = options.mail === false;
    const sub = await this.call('adminCreateUser', async () => {
      try {
        return await this.client.adminCreateUser(email, { suppress });
      } catch (error) {
        if (exceptionName(error) !== 'UsernameExistsException') throw error;
        const existing = await this.client.adminGetUser(email);
        if (existing.status === 'UNCONFIRMED') {
          // Cognito has no conditional delete: a confirmation landing between these two calls is lost, and the
          // person gets the invitation instead (the mailbox's owner either way)
          await this.client.adminDeleteUser(email);
          return await this.client.adminCreateUser(email, { suppress });
        }
        // past its invitation (CONFIRMED and the like): the address has an account in use
        if (existing.status !== 'FORCE_CHANGE_PASSWORD') throw error;
        if (suppress) return existing.sub;
        try {
          return await this.client.adminResendInvitation(email);
        } catch (again) {
          throw exceptionName(again) === 'UnsupportedUserStateException' ? error : again;
        }
      }
    });
    return { provider: PROVIDER, subject: sub, email };
  }

  /** One call, its exceptions as the port's outcomes. */
  private async call<T>(operation: Operation, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw toDomainError(operation, error);
    }
  }

  /** Sign-up, resend and forgot: the same answer whether the address has an account or not. */
  private async codeSent(operation: 'signUp' | 'resendConfirmationCode' | 'forgotPassword', email: string, run: () => Promise<void>): Promise<CodeSent> {
    try {
      await run();
    } catch (error) {
      if (!isSilentForCodeSent(operation, error)) throw toDomainError(operation, error);
    }
    return { destination: maskEmail(email) };
  }

  private async identityOf(answer: AuthAnswer): Promise<IdentityRef> {
    if (answer.kind === 'challenge') {
      throw new DomainError(
        'CONFLICT',
        `this account needs the ${answer.name} step, which this API does not support: sign in through the hosted UI, or ask the pool's administrator`,
      );
    }
    return identityFromClaims(await this.verifier.verify(answer.idToken));
  }
}

/** The token endpoint's refusal as the port's outcome: a bad code is the caller's, the rest ours. */
const hostedUiFailure = (error: unknown): Error => {
  if (!(error instanceof HostedUiError)) return new Error(`Cognito hosted UI: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  if (error.status === 429) return rateLimited('Cognito is limiting these requests', THROTTLE_RETRY_SECONDS);
  if (error.code === 'invalid_grant') {
    return invalidInput(['body', 'code'], 'the code is not valid: it was used, has expired, or was issued for another redirect_uri or code_verifier');
  }
  if (error.code === 'invalid_request' && error.status < 500) return invalidInput(['body', 'code'], `the token endpoint refused the request: ${error.message}`);
  // invalid_client, unauthorized_client, unsupported_grant_type, 5xx: our configuration or Cognito's fault
  return new Error(`Cognito hosted UI: ${error.message}; check COGNITO_CLIENT_ID, COGNITO_CLIENT_SECRET and the app client's OAuth settings`, { cause: error });
};
