import { describe, expect, it } from 'vitest';
import { DomainError } from '../../core/errors.ts';
import { fromEnv, issuerOf } from '../../adapters/identity/cognito/index.ts';
import {
  identityFromClaims,
  isSilentForCodeSent,
  maskEmail,
  packSession,
  secretHash,
  toDomainError,
  unpackSession,
} from '../../adapters/identity/cognito/mapping.ts';

/** An SDK service exception as the SDK builds it from `__type` (name) and the HTTP status. */
const cognitoError = (name: string, message: string, status = 400): Error =>
  Object.assign(new Error(message), { name, $fault: status >= 500 ? 'server' : 'client', $metadata: { httpStatusCode: status } });

describe('SECRET_HASH', () => {
  it('is Base64(HMAC-SHA256(secret, username + client id)), as computed by Python\'s hmac', () => {
    expect(secretHash('c1ientSecret', 'alice@example.com', '3n4b5urk1ft4fl3mg5e62d9ado')).toBe('D2yFnaHR6AU26DgCF+YzdZNqZxQ/WXANgDYTWsr1vts=');
  });
});

describe('maskEmail', () => {
  it('masks like Cognito\'s CodeDeliveryDetails: first letters and the top-level domain', () => {
    expect(maskEmail('alice@example.com')).toBe('a***@e***.com');
    expect(maskEmail('t.k@team.example.by')).toBe('t***@t***.by');
    expect(maskEmail('not-an-address')).toBe('***');
  });
});

describe('the new-password session', () => {
  it('carries the internal username beside Cognito\'s Session, and refuses what is not one', () => {
    const packed = packSession('7d9f1f3e-uuid', 'AYABeC.session/with+dots.and=');
    expect(unpackSession(packed)).toEqual({ internalUsername: '7d9f1f3e-uuid', cognitoSession: 'AYABeC.session/with+dots.and=' });
    expect(unpackSession('no-dot')).toBeNull();
    expect(unpackSession('.only-session')).toBeNull();
    expect(unpackSession('dXNlcg.')).toBeNull();
  });
});

describe('identityFromClaims', () => {
  it('keeps the address only when it is verified (a boolean, or "true" for federated users)', () => {
    expect(identityFromClaims({ sub: 's1', email: 'a@b.co', email_verified: true })).toEqual({ provider: 'cognito', subject: 's1', email: 'a@b.co' });
    expect(identityFromClaims({ sub: 's1', email: 'a@b.co', email_verified: 'true' }).email).toBe('a@b.co');
    expect(identityFromClaims({ sub: 's1', email: 'a@b.co', email_verified: false }).email).toBeNull();
    expect(identityFromClaims({ sub: 's1' }).email).toBeNull();
  });
});

describe('toDomainError', () => {
  const domain = (error: unknown) => {
    expect(error).toBeInstanceOf(DomainError);
    return error as DomainError;
  };

  it('a wrong password and an unknown user are one INVALID_CREDENTIALS at sign-in', () => {
    for (const name of ['NotAuthorizedException', 'UserNotFoundException']) {
      expect(domain(toDomainError('signIn', cognitoError(name, 'Incorrect username or password.'))).code).toBe('INVALID_CREDENTIALS');
    }
  });

  it('a client-secret mismatch is a configuration error, never a wrong password', () => {
    const error = toDomainError('signIn', cognitoError('NotAuthorizedException', 'Unable to verify secret hash for client abc'));
    expect(error).not.toBeInstanceOf(DomainError);
    expect(error.message).toContain('COGNITO_CLIENT_SECRET');
    const disabledFlow = toDomainError('signIn', cognitoError('InvalidParameterException', 'USER_PASSWORD_AUTH flow not enabled for this client'));
    expect(disabledFlow).not.toBeInstanceOf(DomainError);
    expect(disabledFlow.message).toContain('ALLOW_USER_PASSWORD_AUTH');
  });

  it('an unconfirmed user gets CONFLICT saying how to confirm', () => {
    const error = domain(toDomainError('signIn', cognitoError('UserNotConfirmedException', 'User is not confirmed.')));
    expect(error.code).toBe('CONFLICT');
    expect(error.message).toMatch(/confirm/);
  });

  it('codes: mismatch, expiry and a used code are INVALID_INPUT on body.code', () => {
    for (const name of ['CodeMismatchException', 'ExpiredCodeException', 'NotAuthorizedException']) {
      for (const operation of ['confirmSignUp', 'confirmForgotPassword'] as const) {
        const error = domain(toDomainError(operation, cognitoError(name, 'x')));
        expect(error.code).toBe('INVALID_INPUT');
        expect(error.problems[0]?.loc).toEqual(['body', 'code']);
      }
    }
  });

  it('a refused password is INVALID_INPUT on the field the operation takes', () => {
    const refused = cognitoError('InvalidPasswordException', 'Password did not conform with policy: Password not long enough');
    expect(domain(toDomainError('signUp', refused)).problems[0]).toEqual({ loc: ['body', 'password'], msg: 'the password is refused: Password not long enough' });
    expect(domain(toDomainError('confirmForgotPassword', refused)).problems[0]?.loc).toEqual(['body', 'new_password']);
    expect(domain(toDomainError('newPassword', refused)).problems[0]?.loc).toEqual(['body', 'new_password']);
  });

  it('throttling is RATE_LIMITED with a Retry-After; 5xx and lost connections are plain errors', () => {
    for (const name of ['TooManyRequestsException', 'LimitExceededException']) {
      const error = domain(toDomainError('forgotPassword', cognitoError(name, 'Attempt limit exceeded, please try after some time.')));
      expect(error.code).toBe('RATE_LIMITED');
      expect(error.retryAfterSeconds).toBeGreaterThan(0);
    }
    expect(toDomainError('signIn', cognitoError('InternalErrorException', 'boom', 500))).not.toBeInstanceOf(DomainError);
    const lost = toDomainError('signIn', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }));
    expect(lost).not.toBeInstanceOf(DomainError);
    expect(lost.message).toContain('ECONNREFUSED');
  });

  it('an existing address at invite is CONFLICT; missing AWS credentials name the permission', () => {
    expect(domain(toDomainError('adminCreateUser', cognitoError('UsernameExistsException', 'User account already exists'))).code).toBe('CONFLICT');
    const credentials = Object.assign(new Error('Could not load credentials from any providers'), { name: 'CredentialsProviderError' });
    expect(toDomainError('adminCreateUser', credentials).message).toContain('cognito-idp:AdminCreateUser');
  });

  it('the no-enumeration operations treat "taken", "unknown" and "already confirmed" as sent', () => {
    expect(isSilentForCodeSent('signUp', cognitoError('UsernameExistsException', 'An account with the given email already exists.'))).toBe(true);
    expect(isSilentForCodeSent('signUp', cognitoError('InvalidPasswordException', 'x'))).toBe(false);
    expect(isSilentForCodeSent('resendConfirmationCode', cognitoError('InvalidParameterException', 'User is already confirmed.'))).toBe(true);
    expect(isSilentForCodeSent('forgotPassword', cognitoError('UserNotFoundException', 'Username/client id combination not found.'))).toBe(true);
    expect(isSilentForCodeSent('forgotPassword', cognitoError('NotAuthorizedException', 'User password cannot be reset in the current state.'))).toBe(true);
    expect(isSilentForCodeSent('forgotPassword', cognitoError('NotAuthorizedException', 'Unable to verify secret hash for client x'))).toBe(false);
    expect(isSilentForCodeSent('forgotPassword', cognitoError('LimitExceededException', 'x'))).toBe(false);
  });
});

describe('fromEnv', () => {
  const base = { COGNITO_REGION: 'eu-west-1', COGNITO_USER_POOL_ID: 'eu-west-1_AbC123', COGNITO_CLIENT_ID: '3n4b5urk1ft4fl3mg5e62d9ado' };

  it('is null without any COGNITO_ variable', () => {
    expect(fromEnv({})).toBeNull();
    expect(fromEnv({ COGNITO_REGION: ' ' })).toBeNull();
  });

  it('reads the three required values and the optional ones', () => {
    expect(fromEnv(base)).toEqual({ region: 'eu-west-1', userPoolId: 'eu-west-1_AbC123', clientId: '3n4b5urk1ft4fl3mg5e62d9ado' });
    expect(
      fromEnv({ ...base, COGNITO_CLIENT_SECRET: 's3cr3t', COGNITO_DOMAIN: 'myapp.auth.eu-west-1.amazoncognito.com/', COGNITO_ENDPOINT: 'http://127.0.0.1:9229' }),
    ).toEqual({
      region: 'eu-west-1',
      userPoolId: 'eu-west-1_AbC123',
      clientId: '3n4b5urk1ft4fl3mg5e62d9ado',
      clientSecret: 's3cr3t',
      domain: 'https://myapp.auth.eu-west-1.amazoncognito.com',
      endpoint: 'http://127.0.0.1:9229',
    });
  });

  it('a partial set names the missing variables', () => {
    expect(() => fromEnv({ COGNITO_REGION: 'eu-west-1' })).toThrow(/^COGNITO_USER_POOL_ID, COGNITO_CLIENT_ID: not set/);
    expect(() => fromEnv({ ...base, COGNITO_CLIENT_ID: '' })).toThrow(/^COGNITO_CLIENT_ID: not set/);
    expect(() => fromEnv({ COGNITO_CLIENT_SECRET: 'x' })).toThrow(/^COGNITO_CLIENT_SECRET: set, but COGNITO_REGION/);
  });

  it('a malformed value names its variable', () => {
    expect(() => fromEnv({ ...base, COGNITO_REGION: 'Ireland' })).toThrow(/^COGNITO_REGION:/);
    expect(() => fromEnv({ ...base, COGNITO_USER_POOL_ID: 'AbC123' })).toThrow(/^COGNITO_USER_POOL_ID:/);
    expect(() => fromEnv({ ...base, COGNITO_USER_POOL_ID: 'us-east-1_AbC123' })).toThrow(/^COGNITO_USER_POOL_ID: .*us-east-1.*eu-west-1/);
    expect(() => fromEnv({ ...base, COGNITO_CLIENT_ID: 'has spaces' })).toThrow(/^COGNITO_CLIENT_ID:/);
    expect(() => fromEnv({ ...base, COGNITO_DOMAIN: 'ftp://x' })).toThrow(/^COGNITO_DOMAIN:/);
    expect(() => fromEnv({ ...base, COGNITO_ENDPOINT: 'http://x/?a=1' })).toThrow(/^COGNITO_ENDPOINT:/);
  });

  it('the issuer is the regional Cognito URL, or the test endpoint\'s', () => {
    expect(issuerOf({ region: 'eu-west-1', userPoolId: 'eu-west-1_AbC123' })).toBe('https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbC123');
    expect(issuerOf({ region: 'eu-west-1', userPoolId: 'eu-west-1_AbC123', endpoint: 'http://127.0.0.1:9/' })).toBe('http://127.0.0.1:9/eu-west-1_AbC123');
  });
});
