import { createHmac } from 'node:crypto';
import { DomainError, invalidInput, rateLimited } from '../../../core/errors.ts';
import type { IdentityRef } from '../../../core/ports/identity.ts';

export const PROVIDER = 'cognito';

/** How long to tell a throttled caller to wait: Cognito sends no Retry-After. */
export const THROTTLE_RETRY_SECONDS = 30;

/** Cognito's SECRET_HASH: Base64(HMAC-SHA256(key = client secret, message = username + client id)). */
export const secretHash = (clientSecret: string, username: string, clientId: string): string =>
  createHmac('sha256', clientSecret).update(username + clientId).digest('base64');

/**
 * The address masked as Cognito masks a CodeDeliveryDetails destination: "a***@e***.com". Computed here,
 * never read from Cognito, so known and unknown addresses get the same answer.
 */
export const maskEmail = (email: string): string => {
  const at = email.lastIndexOf('@');
  if (at < 1) return '***';
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  const dot = domain.lastIndexOf('.');
  const suffix = dot > 0 ? domain.slice(dot) : '';
  return `${local[0]}***@${domain[0] ?? ''}***${suffix}`;
};

// ---- the new-password session ----

/**
 * A NEW_PASSWORD_REQUIRED answer must name the user by Cognito's internal username (USER_ID_FOR_SRP, the
 * `sub` in a pool whose username is the email), and the SECRET_HASH must be computed with that name, not
 * with the address signed in with. Our opaque session carries both: "<base64url internal name>.<Session>".
 */
export const packSession = (internalUsername: string, cognitoSession: string): string =>
  `${Buffer.from(internalUsername, 'utf8').toString('base64url')}.${cognitoSession}`;

export const unpackSession = (session: string): { internalUsername: string; cognitoSession: string } | null => {
  const dot = session.indexOf('.');
  if (dot < 1 || dot === session.length - 1) return null;
  const internalUsername = Buffer.from(session.slice(0, dot), 'base64url').toString('utf8');
  if (!internalUsername) return null;
  return { internalUsername, cognitoSession: session.slice(dot + 1) };
};

// ---- identities from verified id tokens ----

/** Cognito writes email_verified as a boolean for its own users and as "true" for some federated ones. */
const isTrue = (value: unknown): boolean => value === true || value === 'true';

export const identityFromClaims = (claims: Record<string, unknown>): IdentityRef => ({
  provider: PROVIDER,
  subject: claims.sub as string,
  email: typeof claims.email === 'string' && isTrue(claims.email_verified) ? claims.email : null,
});

// ---- errors ----

/** The operations whose errors are told apart: the same exception means different things in each. */
export type Operation =
  | 'signUp'
  | 'confirmSignUp'
  | 'resendConfirmationCode'
  | 'signIn'
  | 'newPassword'
  | 'forgotPassword'
  | 'confirmForgotPassword'
  | 'adminCreateUser'
  | 'adminGetUser';

/** The exception's name as the SDK gives it (`name`, from `__type` or x-amzn-ErrorType), or null. */
export const exceptionName = (error: unknown): string | null => {
  if (!(error instanceof Error)) return null;
  const fault = (error as { $fault?: unknown }).$fault;
  return fault === 'client' || fault === 'server' ? error.name : null;
};

const httpStatusOf = (error: unknown): number | null => {
  const status = (error as { $metadata?: { httpStatusCode?: unknown } } | null)?.$metadata?.httpStatusCode;
  return typeof status === 'number' ? status : null;
};

/** A mistake in our configuration, never in the caller's input: these must not pass for a wrong password. */
const configurationHint = (name: string, message: string): string | null => {
  if (/secret hash|configured (for|with) secret|secret was not received|SECRET_HASH/i.test(message)) {
    return 'the app client has a secret the request did not match: set COGNITO_CLIENT_SECRET to the app client\'s secret (or unset it for a client without one)';
  }
  if (/USER_PASSWORD_AUTH/i.test(message)) return 'enable ALLOW_USER_PASSWORD_AUTH on the Cognito app client';
  if (name === 'ResourceNotFoundException') return 'check COGNITO_USER_POOL_ID, COGNITO_CLIENT_ID and COGNITO_REGION';
  if (/client .*does not exist|user pool .*does not exist/i.test(message)) return 'check COGNITO_USER_POOL_ID and COGNITO_CLIENT_ID';
  return null;
};

const AUTH_FAILURES = new Set([
  'AccessDeniedException',
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'MissingAuthenticationTokenException',
  'IncompleteSignature',
  'ExpiredTokenException',
  'CredentialsProviderError',
]);

const codeProblem = (msg: string): DomainError => invalidInput(['body', 'code'], msg);
const WRONG_CODE = 'the code is wrong, used or expired: check the latest message, or ask for a new code';

/** What an invited person whose temporary password expired should do. */
export const INVITATION_EXPIRED =
  'this invitation\'s temporary password has expired: ask the operator who invited you for a new invitation, which mails a fresh temporary password';

/** What the caller should do when the address is not confirmed yet. */
export const NOT_CONFIRMED =
  'the email address is not confirmed yet: confirm it with the 6-digit code sent to it (POST /v1/auth/confirm-email), or ask for a new code (POST /v1/auth/resend-code)';

/**
 * Cognito's answer as one of the port's outcomes (core/ports/identity.ts), or null when the operation
 * treats it as success (the no-enumeration cases, decided by the adapter). Anything else becomes a plain
 * Error: an outage or a misconfiguration, which the host answers with 503.
 */
export const toDomainError = (operation: Operation, error: unknown): DomainError | Error => {
  if (error instanceof DomainError) return error;
  const name = exceptionName(error);
  const message = error instanceof Error ? error.message : String(error);
  if (name === null) {
    // no Cognito answer at all: refused connection, timeout, DNS, or missing AWS credentials
    const credentials = error instanceof Error && error.name === 'CredentialsProviderError';
    return new Error(
      credentials
        ? `Cognito ${operation}: no AWS credentials (${message}); give the control plane credentials allowed cognito-idp:AdminCreateUser, cognito-idp:AdminGetUser and cognito-idp:AdminDeleteUser on the pool`
        : `Cognito ${operation}: ${message}`,
      { cause: error },
    );
  }
  const status = httpStatusOf(error);
  if (name === 'TooManyRequestsException' || name === 'LimitExceededException' || name === 'TooManyFailedAttemptsException') {
    return rateLimited('Cognito is limiting these requests', THROTTLE_RETRY_SECONDS);
  }
  if ((status !== null && status >= 500) || name === 'InternalErrorException' || name === 'InternalServerException') {
    return new Error(`Cognito ${operation}: ${name}: ${message}`, { cause: error });
  }
  const hint = configurationHint(name, message);
  if (hint) return new Error(`Cognito ${operation}: ${name}: ${message}; ${hint}`, { cause: error });
  if (AUTH_FAILURES.has(name)) {
    return new Error(
      `Cognito ${operation}: ${name}: ${message}; the control plane's AWS credentials must allow cognito-idp:AdminCreateUser, cognito-idp:AdminGetUser and cognito-idp:AdminDeleteUser on the pool`,
      { cause: error },
    );
  }

  const passwordField = operation === 'signUp' ? 'password' : 'new_password';
  if (name === 'InvalidPasswordException' || name === 'PasswordHistoryPolicyViolationException') {
    return invalidInput(['body', passwordField], passwordMessage(message));
  }
  // the API's own constraint on the field ("Value at 'password' failed to satisfy constraint: ...")
  if (name === 'InvalidParameterException' && operation !== 'signIn' && /'(password|proposedPassword|NEW_PASSWORD)'/i.test(message)) {
    return invalidInput(['body', passwordField], passwordMessage(message));
  }

  switch (operation) {
    case 'signIn':
      if (name === 'NotAuthorizedException' && /temporary password has expired/i.test(message)) {
        // Cognito says so only after the temporary password matched: it tells a guesser nothing
        return new DomainError('CONFLICT', INVITATION_EXPIRED);
      }
      if (name === 'NotAuthorizedException' || name === 'UserNotFoundException') {
        // "Incorrect username or password.", "User is disabled.", "Password attempts exceeded": one 401 for all,
        // since only known users can be disabled or locked out
        return new DomainError('INVALID_CREDENTIALS', 'wrong email or password');
      }
      if (name === 'UserNotConfirmedException') return new DomainError('CONFLICT', NOT_CONFIRMED);
      if (name === 'PasswordResetRequiredException') {
        return new DomainError('CONFLICT', 'a password reset is required: ask for a code (POST /v1/auth/forgot-password), then set a new password (POST /v1/auth/reset-password)');
      }
      break;
    case 'newPassword':
      if (name === 'NotAuthorizedException' || name === 'CodeMismatchException' || name === 'ExpiredCodeException' || name === 'UserNotFoundException') {
        return new DomainError('INVALID_CREDENTIALS', 'the session is expired or not valid: sign in again with the temporary password');
      }
      break;
    case 'confirmSignUp':
    case 'confirmForgotPassword':
      if (name === 'CodeMismatchException' || name === 'ExpiredCodeException' || name === 'UserNotFoundException' || name === 'NotAuthorizedException') {
        // NotAuthorized: "User cannot be confirmed. Current status is CONFIRMED" (a used code), or a disabled user
        return codeProblem(WRONG_CODE);
      }
      if (name === 'AliasExistsException') {
        return new DomainError('CONFLICT', 'another account already uses this email address: sign in with it, or reset its password');
      }
      break;
    case 'signUp':
      if (name === 'InvalidParameterException' && /email|username/i.test(message)) return invalidInput(['body', 'email'], message);
      if (name === 'InvalidParameterException' && /password/i.test(message)) return invalidInput(['body', 'password'], passwordMessage(message));
      if (name === 'UserLambdaValidationException') return invalidInput(['body', 'email'], lambdaMessage(message));
      break;
    case 'adminCreateUser':
      if (name === 'UsernameExistsException' || name === 'AliasExistsException') {
        return new DomainError('CONFLICT', 'an account with this email address exists already');
      }
      if (name === 'InvalidParameterException' && /email|username/i.test(message)) return invalidInput(['body', 'email'], message);
      break;
    default:
      break;
  }
  return new Error(`Cognito ${operation}: ${name}: ${message}`, { cause: error });
};

/** "Password did not conform with policy: Password not long enough" -> "Password not long enough". */
const passwordMessage = (message: string): string => {
  const detail = message.replace(/^Password did not conform with policy:\s*/i, '').trim();
  return detail ? `the password is refused: ${detail}` : 'the password does not meet the pool\'s password policy';
};

/** "PreSignUp failed with error <text>." -> "<text>": what the pool's own check said. */
const lambdaMessage = (message: string): string => message.replace(/^\w+ failed with error\s*/i, '').replace(/\.$/, '') || message;

/** True for the exceptions that the no-enumeration operations answer as if a code had been sent. */
export const isSilentForCodeSent = (operation: 'signUp' | 'resendConfirmationCode' | 'forgotPassword', error: unknown): boolean => {
  const name = exceptionName(error);
  if (name === null) return false;
  const message = error instanceof Error ? error.message : '';
  if (configurationHint(name, message)) return false;
  switch (operation) {
    case 'signUp':
      // the address is taken (confirmed or not): the same answer as a new one
      return name === 'UsernameExistsException' || name === 'AliasExistsException';
    case 'resendConfirmationCode':
      // unknown (LEGACY pools), or already confirmed ("User is already confirmed."), or disabled
      return name === 'UserNotFoundException' || name === 'InvalidParameterException' || name === 'NotAuthorizedException';
    case 'forgotPassword':
      // unknown (LEGACY), no verified address ("Cannot reset password for the user as there is no registered/
      // verified email"), or a state that cannot reset (an invited user who never signed in)
      return name === 'UserNotFoundException' || name === 'InvalidParameterException' || name === 'NotAuthorizedException';
  }
};
