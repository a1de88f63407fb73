import { createHash, createHmac, randomBytes, randomInt, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type JWK } from 'jose';

/**
 * A local stand-in for an Amazon Cognito user pool whose username is the email address:
 * - the user pool API over JSON 1.1 (POST / with X-Amz-Target AWSCognitoIdentityProviderService.<Op>):
 *   SignUp, ConfirmSignUp, ResendConfirmationCode, InitiateAuth (USER_PASSWORD_AUTH),
 *   RespondToAuthChallenge (NEW_PASSWORD_REQUIRED), ForgotPassword, ConfirmForgotPassword and the signed
 *   AdminCreateUser (MessageAction RESEND and SUPPRESS too), AdminGetUser and AdminDeleteUser; exceptions as Cognito sends them (HTTP 400, x-amzn-ErrorType, `__type` and `message`);
 * - the hosted UI's POST /oauth2/token (authorization code with PKCE, Basic auth for a client with a secret);
 * - the pool's JWKS at /{poolId}/.well-known/jwks.json; tokens signed RS256 with a `kid`, issuer
 *   `${url}/${poolId}`.
 * It enforces a password policy, SECRET_HASH for a client with a secret (the internal username's hash on
 * RespondToAuthChallenge, as Cognito does), code expiry and tries, and PreventUserExistenceErrors.
 */

export type UserStatus = 'UNCONFIRMED' | 'CONFIRMED' | 'FORCE_CHANGE_PASSWORD';
export type CodePurpose = 'confirm' | 'reset';

export interface PasswordPolicy {
  minimumLength: number;
  requireUppercase: boolean;
  requireLowercase: boolean;
  requireNumbers: boolean;
  requireSymbols: boolean;
}

/** Cognito's default policy for a new pool. */
export const DEFAULT_POLICY: PasswordPolicy = {
  minimumLength: 8,
  requireUppercase: true,
  requireLowercase: true,
  requireNumbers: true,
  requireSymbols: true,
};

export interface FakeUser {
  /** The internal username as well as the `sub`: a pool with email as username names users by UUID. */
  sub: string;
  email: string;
  password: string;
  status: UserStatus;
  emailVerified: boolean;
  enabled: boolean;
  /** For FORCE_CHANGE_PASSWORD users: when the temporary password stops working. */
  temporaryPasswordExpiresAt: number | null;
}

export interface SentMessage {
  to: string;
  kind: 'confirm' | 'reset' | 'invite';
  /** The 6-digit code of a confirm or reset message. */
  code: string | null;
  /** The temporary password of an invitation. */
  temporaryPassword: string | null;
  at: number;
}

export interface RecordedCall {
  /** The operation ("SignUp") or the path ("/oauth2/token", "/{pool}/.well-known/jwks.json"). */
  target: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  status: number;
}

export interface FakeCognitoOptions {
  region?: string;
  userPoolId?: string;
  clientId?: string;
  /** The app client's secret; null (default) for a public client. */
  clientSecret?: string | null;
  passwordPolicy?: Partial<PasswordPolicy>;
  /** The app client's PreventUserExistenceErrors: ENABLED (true, the console's default) or LEGACY. */
  preventUserExistenceErrors?: boolean;
  /** Whether the app client allows USER_PASSWORD_AUTH (default true). */
  userPasswordAuth?: boolean;
  /** Sign-up codes last 24 hours at Cognito, reset codes 1 hour. */
  confirmCodeTtlMs?: number;
  resetCodeTtlMs?: number;
  /** Failed tries of one code before Cognito answers LimitExceededException for it. */
  maxCodeFailures?: number;
  /** An invitation's temporary password: 7 days by default. */
  temporaryPasswordTtlMs?: number;
  /** An auth challenge's Session: 3 minutes by default. */
  sessionTtlMs?: number;
  /** A hosted UI authorization code: 5 minutes. */
  authorizationCodeTtlMs?: number;
  idTokenTtlSeconds?: number;
}

interface Fault {
  remaining: number;
  status: number;
  type: string;
  message: string;
  /** An operation name or a path; null for any call. */
  match: string | null;
}

export interface FakeCognitoState {
  readonly region: string;
  readonly userPoolId: string;
  readonly clientId: string;
  clientSecret: string | null;
  /** `${url}/${userPoolId}`: the `iss` of every token. */
  readonly issuer: string;
  policy: PasswordPolicy;
  preventUserExistenceErrors: boolean;
  userPasswordAuth: boolean;
  users: Map<string, FakeUser>;
  outbox: SentMessage[];
  calls: RecordedCall[];
  /** Added to every answer. */
  latencyMs: number;
  userByEmail(email: string): FakeUser | null;
  /** The last code sent to the address for that purpose, or null. */
  lastCode(email: string, purpose: CodePurpose): string | null;
  /** The temporary password of the address's invitation, or null. */
  temporaryPassword(email: string): string | null;
  /** Makes the address's outstanding codes (and an invited user's temporary password) expired. */
  expireCodes(email: string): void;
  /**
   * The hosted UI's sign-in: checks the password as the login page would and hands out an authorization
   * code bound to the redirect URI and the PKCE challenge (S256, or null for none). Throws when the
   * sign-in would fail at the page.
   */
  authorize(email: string, password: string, redirectUri: string, codeChallenge: string | null): string;
  /** The next `count` matching calls answer this exception instead (status 400 unless given). */
  failNext(count: number, type: string, options?: { status?: number; message?: string; match?: string }): void;
  /** The next sign-in whose password holds answers this challenge (e.g. "SMS_MFA", as an MFA pool would). */
  challengeNext(name: string): void;
  /** The next id token handed out is replaced by what `make` returns from the claims it would have had. */
  replaceNextIdToken(make: (claims: Record<string, unknown>) => Promise<string> | string): void;
  /** Signs claims as the pool does (RS256, the JWKS's kid), or with a key the JWKS does not hold. */
  sign(claims: Record<string, unknown>, options?: { foreignKey?: boolean }): Promise<string>;
  /** The claims of an id token the pool would issue now for this user. */
  idClaims(user: FakeUser): Record<string, unknown>;
  callsTo(target: string): RecordedCall[];
}

export interface FakeCognito {
  /** The base URL: the user pool API endpoint, the hosted UI domain and the issuer's base. */
  url: string;
  state: FakeCognitoState;
  close(): Promise<void>;
}

class Answer {
  readonly status: number;
  readonly body: unknown;
  readonly type: string | null;

  constructor(status: number, body: unknown, type: string | null = null) {
    this.status = status;
    this.body = body;
    this.type = type;
  }
}

const ok = (body: unknown = {}) => new Answer(200, body);
const exception = (type: string, message: string, status = 400) => new Answer(status, { __type: type, message }, type);

const TARGET_PREFIX = 'AWSCognitoIdentityProviderService.';
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const SYMBOLS = /[\^$*.[\]{}()?"!@#%&/\\,><':;|_~`=+\-]/;

const mask = (email: string): string => {
  const [local = '', domain = ''] = email.split('@');
  const dot = domain.lastIndexOf('.');
  return `${local[0] ?? ''}***@${domain[0] ?? ''}***${dot > 0 ? domain.slice(dot) : ''}`;
};

const sixDigits = (): string => String(randomInt(0, 1_000_000)).padStart(6, '0');

const equalText = (a: string, b: string): boolean => {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
};

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const str = (body: Record<string, unknown>, key: string): string | null => (typeof body[key] === 'string' ? (body[key] as string) : null);

export async function startFakeCognito(options: FakeCognitoOptions = {}): Promise<FakeCognito> {
  const region = options.region ?? 'eu-west-1';
  const userPoolId = options.userPoolId ?? `${region}_FakePool01`;
  const clientId = options.clientId ?? randomBytes(13).toString('hex');
  const kid = randomBytes(12).toString('base64url');
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  /** A key the JWKS does not hold, made on first use (RSA key generation is slow). */
  let foreign: Awaited<ReturnType<typeof generateKeyPair>> | null = null;
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };

  const ttl = {
    confirm: options.confirmCodeTtlMs ?? 24 * 3600_000,
    reset: options.resetCodeTtlMs ?? 3600_000,
    temporaryPassword: options.temporaryPasswordTtlMs ?? 7 * 24 * 3600_000,
    session: options.sessionTtlMs ?? 3 * 60_000,
    authorizationCode: options.authorizationCodeTtlMs ?? 5 * 60_000,
    idTokenSeconds: options.idTokenTtlSeconds ?? 3600,
  };
  const maxCodeFailures = options.maxCodeFailures ?? 5;

  const codes = new Map<string, { code: string; expiresAt: number; failures: number }>();
  const sessions = new Map<string, { sub: string; expiresAt: number }>();
  const authorizationCodes = new Map<
    string,
    { sub: string; redirectUri: string; codeChallenge: string | null; expiresAt: number }
  >();
  const faults: Fault[] = [];
  const challenges: string[] = [];
  const replacements: ((claims: Record<string, unknown>) => Promise<string> | string)[] = [];
  let baseUrl = '';

  const codeKey = (sub: string, purpose: CodePurpose) => `${purpose}:${sub}`;

  const state: FakeCognitoState = {
    region,
    userPoolId,
    clientId,
    clientSecret: options.clientSecret ?? null,
    get issuer() {
      return `${baseUrl}/${userPoolId}`;
    },
    policy: { ...DEFAULT_POLICY, ...options.passwordPolicy },
    preventUserExistenceErrors: options.preventUserExistenceErrors ?? true,
    userPasswordAuth: options.userPasswordAuth ?? true,
    users: new Map(),
    outbox: [],
    calls: [],
    latencyMs: 0,
    userByEmail(email) {
      // usernames (here: addresses) are case-insensitive, as in a pool made by the console
      return state.users.get(email.trim().toLowerCase()) ?? null;
    },
    lastCode(email, purpose) {
      const wanted = email.trim().toLowerCase();
      const kind = purpose === 'confirm' ? 'confirm' : 'reset';
      const sent = state.outbox.filter((m) => m.kind === kind && m.to.toLowerCase() === wanted).at(-1);
      return sent?.code ?? null;
    },
    temporaryPassword(email) {
      const wanted = email.trim().toLowerCase();
      return state.outbox.filter((m) => m.kind === 'invite' && m.to.toLowerCase() === wanted).at(-1)?.temporaryPassword ?? null;
    },
    expireCodes(email) {
      const user = state.userByEmail(email);
      if (!user) return;
      for (const purpose of ['confirm', 'reset'] as const) {
        const entry = codes.get(codeKey(user.sub, purpose));
        if (entry) entry.expiresAt = Date.now() - 1;
      }
      if (user.temporaryPasswordExpiresAt !== null) user.temporaryPasswordExpiresAt = Date.now() - 1;
    },
    authorize(email, password, redirectUri, codeChallenge) {
      const user = state.userByEmail(email);
      if (!user || !user.enabled || !equalText(user.password, password)) throw new Error('Incorrect username or password.');
      if (user.status === 'UNCONFIRMED') throw new Error('User is not confirmed.');
      if (user.status === 'FORCE_CHANGE_PASSWORD') throw new Error('the hosted UI would ask for a new password first');
      const code = randomUUID();
      authorizationCodes.set(code, { sub: user.sub, redirectUri, codeChallenge, expiresAt: Date.now() + ttl.authorizationCode });
      return code;
    },
    failNext(count, type, opts = {}) {
      faults.push({ remaining: count, type, status: opts.status ?? 400, message: opts.message ?? `Injected ${type}`, match: opts.match ?? null });
    },
    challengeNext(name) {
      challenges.push(name);
    },
    replaceNextIdToken(make) {
      replacements.push(make);
    },
    async sign(claims, opts = {}) {
      if (opts.foreignKey) foreign ??= await generateKeyPair('RS256');
      const key = opts.foreignKey ? foreign!.privateKey : privateKey;
      return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid }).sign(key);
    },
    idClaims(user) {
      const now = Math.floor(Date.now() / 1000);
      return {
        sub: user.sub,
        email_verified: user.emailVerified,
        iss: state.issuer,
        'cognito:username': user.sub,
        origin_jti: randomUUID(),
        aud: clientId,
        event_id: randomUUID(),
        token_use: 'id',
        auth_time: now,
        exp: now + ttl.idTokenSeconds,
        iat: now,
        jti: randomUUID(),
        email: user.email,
      };
    },
    callsTo(target) {
      return state.calls.filter((c) => c.target === target);
    },
  };

  // ---- helpers of the API ----

  const tokensFor = async (user: FakeUser) => {
    const claims = state.idClaims(user);
    const replace = replacements.shift();
    const idToken = replace ? await replace(claims) : await state.sign(claims);
    const now = Math.floor(Date.now() / 1000);
    const accessToken = await state.sign({
      sub: user.sub,
      iss: state.issuer,
      client_id: clientId,
      origin_jti: claims.origin_jti,
      event_id: claims.event_id,
      token_use: 'access',
      scope: 'aws.cognito.signin.user.admin',
      auth_time: now,
      exp: now + ttl.idTokenSeconds,
      iat: now,
      jti: randomUUID(),
      username: user.sub,
    });
    return { idToken, accessToken, refreshToken: randomBytes(48).toString('base64url') };
  };

  const codeDelivery = (email: string) => ({ Destination: mask(email), DeliveryMedium: 'EMAIL', AttributeName: 'email' });

  const sendCode = (user: FakeUser, purpose: CodePurpose) => {
    const code = sixDigits();
    codes.set(codeKey(user.sub, purpose), { code, expiresAt: Date.now() + (purpose === 'confirm' ? ttl.confirm : ttl.reset), failures: 0 });
    state.outbox.push({ to: user.email, kind: purpose, code, temporaryPassword: null, at: Date.now() });
  };

  /** The check of a code: null when it holds (and is used up), else Cognito's exception. */
  const useCode = (user: FakeUser, purpose: CodePurpose, given: string): Answer | null => {
    const entry = codes.get(codeKey(user.sub, purpose));
    if (entry && entry.failures >= maxCodeFailures) return exception('LimitExceededException', 'Attempt limit exceeded, please try after some time.');
    if (!entry || !equalText(entry.code, given)) {
      if (entry) entry.failures += 1;
      return exception('CodeMismatchException', 'Invalid verification code provided, please try again.');
    }
    if (entry.expiresAt <= Date.now()) return exception('ExpiredCodeException', 'Invalid code provided, please request a code again.');
    codes.delete(codeKey(user.sub, purpose));
    return null;
  };

  const policyProblem = (password: string): string | null => {
    const p = state.policy;
    if (password.length < p.minimumLength) return 'Password not long enough';
    if (p.requireLowercase && !/[a-z]/.test(password)) return 'Password must have lowercase characters';
    if (p.requireUppercase && !/[A-Z]/.test(password)) return 'Password must have uppercase characters';
    if (p.requireNumbers && !/[0-9]/.test(password)) return 'Password must have numeric characters';
    if (p.requireSymbols && !SYMBOLS.test(password)) return 'Password must have symbol characters';
    return null;
  };

  /** The API's field constraint first (InvalidParameterException), then the pool's policy. */
  const passwordAnswer = (field: string, password: string | null): Answer | null => {
    if (password === null) return exception('InvalidParameterException', `Missing required parameter ${field}`);
    if (password.length > 256 || !/^\S(?:.*\S)?$/s.test(password)) {
      return exception(
        'InvalidParameterException',
        `1 validation error detected: Value at '${field}' failed to satisfy constraint: Member must satisfy regular expression pattern: ^[\\S]+.*[\\S]+$`,
      );
    }
    const problem = policyProblem(password);
    return problem ? exception('InvalidPasswordException', `Password did not conform with policy: ${problem}`) : null;
  };

  const hashOf = (username: string): string => createHmac('sha256', state.clientSecret!).update(username + clientId).digest('base64');

  /** The app client check every client-side call gets: the id, then SECRET_HASH when it has a secret. */
  const clientAnswer = (givenClientId: string | null, username: string | null, givenHash: string | null): Answer | null => {
    if (givenClientId !== clientId) return exception('ResourceNotFoundException', `User pool client ${givenClientId ?? ''} does not exist.`);
    if (state.clientSecret === null) return null;
    if (!givenHash) return exception('NotAuthorizedException', `Client ${clientId} is configured for secret but secret was not received`);
    if (username === null || !equalText(hashOf(username), givenHash)) {
      return exception('NotAuthorizedException', `Unable to verify secret hash for client ${clientId}`);
    }
    return null;
  };

  const unknownUser = (simulated: Answer): Answer =>
    state.preventUserExistenceErrors ? simulated : exception('UserNotFoundException', 'Username/client id combination not found.');

  // ---- the operations ----

  const operations: Record<string, (body: Record<string, unknown>, req: IncomingMessage) => Promise<Answer> | Answer> = {
    SignUp(body) {
      const username = str(body, 'Username');
      const bad = clientAnswer(str(body, 'ClientId'), username, str(body, 'SecretHash'));
      if (bad) return bad;
      if (!username) return exception('InvalidParameterException', 'Missing required parameter USERNAME');
      const password = passwordAnswer('password', str(body, 'Password'));
      if (password) return password;
      if (!EMAIL.test(username)) return exception('InvalidParameterException', 'Username should be an email.');
      if (state.userByEmail(username)) return exception('UsernameExistsException', 'An account with the given email already exists.');
      const user: FakeUser = {
        sub: randomUUID(),
        email: username.trim(),
        password: str(body, 'Password')!,
        status: 'UNCONFIRMED',
        emailVerified: false,
        enabled: true,
        temporaryPasswordExpiresAt: null,
      };
      state.users.set(user.email.toLowerCase(), user);
      sendCode(user, 'confirm');
      return ok({ UserConfirmed: false, CodeDeliveryDetails: codeDelivery(user.email), UserSub: user.sub });
    },

    ConfirmSignUp(body) {
      const username = str(body, 'Username');
      const bad = clientAnswer(str(body, 'ClientId'), username, str(body, 'SecretHash'));
      if (bad) return bad;
      const user = username ? state.userByEmail(username) : null;
      if (!user) return unknownUser(exception('CodeMismatchException', 'Invalid verification code provided, please try again.'));
      if (user.status !== 'UNCONFIRMED') return exception('NotAuthorizedException', `User cannot be confirmed. Current status is ${user.status}`);
      const code = useCode(user, 'confirm', str(body, 'ConfirmationCode') ?? '');
      if (code) return code;
      user.status = 'CONFIRMED';
      user.emailVerified = true;
      return ok({});
    },

    ResendConfirmationCode(body) {
      const username = str(body, 'Username');
      const bad = clientAnswer(str(body, 'ClientId'), username, str(body, 'SecretHash'));
      if (bad) return bad;
      const user = username ? state.userByEmail(username) : null;
      if (!user) return unknownUser(ok({ CodeDeliveryDetails: codeDelivery(username ?? '') }));
      if (user.status !== 'UNCONFIRMED') return exception('InvalidParameterException', 'User is already confirmed.');
      sendCode(user, 'confirm');
      return ok({ CodeDeliveryDetails: codeDelivery(user.email) });
    },

    async InitiateAuth(body) {
      const flow = str(body, 'AuthFlow');
      const parameters = isObject(body.AuthParameters) ? (body.AuthParameters as Record<string, unknown>) : {};
      const username = str(parameters, 'USERNAME');
      const bad = clientAnswer(str(body, 'ClientId'), username, str(parameters, 'SECRET_HASH'));
      if (bad) return bad;
      if (flow !== 'USER_PASSWORD_AUTH') return exception('InvalidParameterException', 'Initiate Auth method not supported.');
      if (!state.userPasswordAuth) return exception('InvalidParameterException', 'USER_PASSWORD_AUTH flow not enabled for this client');
      const password = str(parameters, 'PASSWORD') ?? '';
      const user = username ? state.userByEmail(username) : null;
      if (!user) {
        return state.preventUserExistenceErrors
          ? exception('NotAuthorizedException', 'Incorrect username or password.')
          : exception('UserNotFoundException', 'User does not exist.');
      }
      if (!user.enabled) return exception('NotAuthorizedException', 'User is disabled.');
      // as Cognito does (and calls intended): an unconfirmed account says so whatever the password
      if (user.status === 'UNCONFIRMED') return exception('UserNotConfirmedException', 'User is not confirmed.');
      if (!equalText(user.password, password)) return exception('NotAuthorizedException', 'Incorrect username or password.');
      const challenge = challenges.shift();
      if (challenge) {
        return ok({ ChallengeName: challenge, Session: randomBytes(96).toString('base64'), ChallengeParameters: { USER_ID_FOR_SRP: user.sub } });
      }
      if (user.status === 'FORCE_CHANGE_PASSWORD') {
        if ((user.temporaryPasswordExpiresAt ?? 0) <= Date.now()) {
          return exception('NotAuthorizedException', 'Temporary password has expired and must be reset by an administrator.');
        }
        const session = randomBytes(96).toString('base64');
        sessions.set(session, { sub: user.sub, expiresAt: Date.now() + ttl.session });
        return ok({
          ChallengeName: 'NEW_PASSWORD_REQUIRED',
          Session: session,
          ChallengeParameters: {
            USER_ID_FOR_SRP: user.sub,
            requiredAttributes: '[]',
            userAttributes: JSON.stringify({ email_verified: String(user.emailVerified), email: user.email }),
          },
        });
      }
      const tokens = await tokensFor(user);
      return ok({
        ChallengeParameters: {},
        AuthenticationResult: {
          AccessToken: tokens.accessToken,
          ExpiresIn: ttl.idTokenSeconds,
          TokenType: 'Bearer',
          RefreshToken: tokens.refreshToken,
          IdToken: tokens.idToken,
        },
      });
    },

    async RespondToAuthChallenge(body) {
      const responses = isObject(body.ChallengeResponses) ? (body.ChallengeResponses as Record<string, unknown>) : {};
      if (str(body, 'ClientId') !== clientId) return exception('ResourceNotFoundException', `User pool client ${str(body, 'ClientId') ?? ''} does not exist.`);
      if (str(body, 'ChallengeName') !== 'NEW_PASSWORD_REQUIRED') return exception('InvalidParameterException', 'Invalid challenge name.');
      const session = sessions.get(str(body, 'Session') ?? '');
      if (!session || session.expiresAt <= Date.now()) return exception('NotAuthorizedException', 'Invalid session for the user, session is expired.');
      const user = [...state.users.values()].find((u) => u.sub === session.sub);
      if (!user) return exception('NotAuthorizedException', 'Invalid session for the user.');
      const username = str(responses, 'USERNAME');
      if (username !== user.sub && username?.toLowerCase() !== user.email.toLowerCase()) {
        return exception('NotAuthorizedException', 'Invalid session for the user.');
      }
      // Cognito checks SECRET_HASH against the internal username here, whatever USERNAME the caller sent
      const bad = clientAnswer(clientId, user.sub, str(responses, 'SECRET_HASH'));
      if (bad) return bad;
      const password = passwordAnswer('NEW_PASSWORD', str(responses, 'NEW_PASSWORD'));
      if (password) return password;
      sessions.delete(str(body, 'Session')!);
      user.password = str(responses, 'NEW_PASSWORD')!;
      user.status = 'CONFIRMED';
      user.temporaryPasswordExpiresAt = null;
      const tokens = await tokensFor(user);
      return ok({
        ChallengeParameters: {},
        AuthenticationResult: {
          AccessToken: tokens.accessToken,
          ExpiresIn: ttl.idTokenSeconds,
          TokenType: 'Bearer',
          RefreshToken: tokens.refreshToken,
          IdToken: tokens.idToken,
        },
      });
    },

    ForgotPassword(body) {
      const username = str(body, 'Username');
      const bad = clientAnswer(str(body, 'ClientId'), username, str(body, 'SecretHash'));
      if (bad) return bad;
      const user = username ? state.userByEmail(username) : null;
      if (!user) return unknownUser(ok({ CodeDeliveryDetails: codeDelivery(username ?? '') }));
      if (!user.enabled) return exception('NotAuthorizedException', 'User is disabled.');
      if (user.status === 'FORCE_CHANGE_PASSWORD') return exception('NotAuthorizedException', 'User password cannot be reset in the current state.');
      if (!user.emailVerified) {
        return exception('InvalidParameterException', 'Cannot reset password for the user as there is no registered/verified email or phone_number');
      }
      sendCode(user, 'reset');
      return ok({ CodeDeliveryDetails: codeDelivery(user.email) });
    },

    ConfirmForgotPassword(body) {
      const username = str(body, 'Username');
      const bad = clientAnswer(str(body, 'ClientId'), username, str(body, 'SecretHash'));
      if (bad) return bad;
      const user = username ? state.userByEmail(username) : null;
      if (!user) return unknownUser(exception('CodeMismatchException', 'Invalid verification code provided, please try again.'));
      const password = passwordAnswer('password', str(body, 'Password'));
      if (password) return password;
      const code = useCode(user, 'reset', str(body, 'ConfirmationCode') ?? '');
      if (code) return code;
      user.password = str(body, 'Password')!;
      user.status = 'CONFIRMED';
      return ok({});
    },

    AdminCreateUser(body, req) {
      // a signed call: the fake takes any SigV4 signature, but not none
      if (!String(req.headers.authorization ?? '').startsWith('AWS4-HMAC-SHA256 ')) {
        return exception('MissingAuthenticationTokenException', 'Missing Authentication Token');
      }
      if (str(body, 'UserPoolId') !== userPoolId) return exception('ResourceNotFoundException', `User pool ${str(body, 'UserPoolId') ?? ''} does not exist.`);
      const username = str(body, 'Username');
      if (!username || !EMAIL.test(username)) return exception('InvalidParameterException', 'Username should be an email.');
      if (body.MessageAction === 'RESEND') {
        // Cognito's resend of an invitation: a fresh temporary password, valid for the whole validity again
        const invited = state.userByEmail(username);
        if (!invited) return exception('UserNotFoundException', 'User does not exist.');
        if (invited.status !== 'FORCE_CHANGE_PASSWORD') return exception('UnsupportedUserStateException', 'Resend not possible. User is not in FORCE_CHANGE_PASSWORD state.');
        invited.password = str(body, 'TemporaryPassword') ?? generatedPassword();
        invited.temporaryPasswordExpiresAt = Date.now() + ttl.temporaryPassword;
        state.outbox.push({ to: invited.email, kind: 'invite', code: null, temporaryPassword: invited.password, at: Date.now() });
        return ok({ User: userType(invited) });
      }
      if (state.userByEmail(username)) return exception('UsernameExistsException', 'User account already exists');
      const attributes = Array.isArray(body.UserAttributes) ? (body.UserAttributes as { Name?: unknown; Value?: unknown }[]) : [];
      const attribute = (name: string) => attributes.find((a) => a.Name === name)?.Value;
      const temporary = str(body, 'TemporaryPassword') ?? generatedPassword();
      const user: FakeUser = {
        sub: randomUUID(),
        email: username.trim(),
        password: temporary,
        status: 'FORCE_CHANGE_PASSWORD',
        emailVerified: attribute('email_verified') === 'true',
        enabled: true,
        temporaryPasswordExpiresAt: Date.now() + ttl.temporaryPassword,
      };
      state.users.set(user.email.toLowerCase(), user);
      if (body.MessageAction !== 'SUPPRESS') {
        state.outbox.push({ to: user.email, kind: 'invite', code: null, temporaryPassword: temporary, at: Date.now() });
      }
      return ok({ User: userType(user) });
    },

    AdminDeleteUser(body, req) {
      if (!String(req.headers.authorization ?? '').startsWith('AWS4-HMAC-SHA256 ')) {
        return exception('MissingAuthenticationTokenException', 'Missing Authentication Token');
      }
      if (str(body, 'UserPoolId') !== userPoolId) return exception('ResourceNotFoundException', `User pool ${str(body, 'UserPoolId') ?? ''} does not exist.`);
      const user = state.userByEmail(str(body, 'Username') ?? '');
      if (!user) return exception('UserNotFoundException', 'User does not exist.');
      // its codes were keyed by its sub: a user made again under the address has a new sub, and none of them
      state.users.delete(user.email.toLowerCase());
      return ok({});
    },

    AdminGetUser(body, req) {
      if (!String(req.headers.authorization ?? '').startsWith('AWS4-HMAC-SHA256 ')) {
        return exception('MissingAuthenticationTokenException', 'Missing Authentication Token');
      }
      if (str(body, 'UserPoolId') !== userPoolId) return exception('ResourceNotFoundException', `User pool ${str(body, 'UserPoolId') ?? ''} does not exist.`);
      const username = str(body, 'Username') ?? '';
      // the username as signed up (the address, any capitals) or the internal one (the sub)
      const user = state.userByEmail(username) ?? [...state.users.values()].find((u) => u.sub === username);
      if (!user) return exception('UserNotFoundException', 'User does not exist.');
      const { Attributes, ...rest } = userType(user);
      return ok({ ...rest, UserAttributes: Attributes });
    },
  };

  /** Cognito's UserType (AdminCreateUser's `User`; AdminGetUser answers the same with `UserAttributes`). */
  const userType = (user: FakeUser) => {
    const now = Date.now() / 1000;
    return {
      Username: user.sub,
      Attributes: [
        { Name: 'sub', Value: user.sub },
        { Name: 'email_verified', Value: String(user.emailVerified) },
        { Name: 'email', Value: user.email },
      ],
      UserCreateDate: now,
      UserLastModifiedDate: now,
      Enabled: user.enabled,
      UserStatus: user.status,
    };
  };

  /** A temporary password that meets the policy, as Cognito makes them. */
  const generatedPassword = (): string => {
    const length = Math.max(state.policy.minimumLength, 12);
    return `${randomBytes(length).toString('base64url').slice(0, length - 4)}aA1!`;
  };

  // ---- the hosted UI token endpoint ----

  const oauthError = (error: string, status = 400) => new Answer(status, { error }, null);

  const tokenEndpoint = async (form: URLSearchParams, authorization: string | undefined): Promise<Answer> => {
    let authenticatedClient: string | null = null;
    if (authorization?.startsWith('Basic ')) {
      const decoded = Buffer.from(authorization.slice(6), 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      const id = decoded.slice(0, colon);
      const secret = decoded.slice(colon + 1);
      if (colon < 0 || id !== clientId || state.clientSecret === null || !equalText(secret, state.clientSecret)) return oauthError('invalid_client');
      authenticatedClient = id;
    }
    const formClient = form.get('client_id');
    if (formClient !== null && formClient !== clientId) return oauthError('invalid_client');
    if (state.clientSecret !== null && authenticatedClient === null) return oauthError('invalid_client');
    if (authenticatedClient === null && formClient === null) return oauthError('invalid_request');
    if (form.get('grant_type') !== 'authorization_code') return oauthError('unsupported_grant_type');
    const code = form.get('code');
    const redirectUri = form.get('redirect_uri');
    if (!code || !redirectUri) return oauthError('invalid_request');
    const entry = authorizationCodes.get(code);
    if (!entry || entry.expiresAt <= Date.now() || entry.redirectUri !== redirectUri) return oauthError('invalid_grant');
    if (entry.codeChallenge !== null) {
      const verifier = form.get('code_verifier');
      if (!verifier || createHash('sha256').update(verifier).digest('base64url') !== entry.codeChallenge) return oauthError('invalid_grant');
    }
    authorizationCodes.delete(code);
    const user = [...state.users.values()].find((u) => u.sub === entry.sub);
    if (!user) return oauthError('invalid_grant');
    const tokens = await tokensFor(user);
    return ok({
      id_token: tokens.idToken,
      access_token: tokens.accessToken,
      refresh_token: tokens.refreshToken,
      expires_in: ttl.idTokenSeconds,
      token_type: 'Bearer',
    });
  };

  // ---- HTTP ----

  const takeFault = (target: string): Fault | null => {
    const hit = faults.find((f) => f.remaining > 0 && (f.match === null || f.match === target));
    if (hit) hit.remaining -= 1;
    return hit ?? null;
  };

  const send = (res: ServerResponse, answer: Answer, contentType: string) => {
    const headers: Record<string, string> = { 'content-type': contentType, 'x-amzn-requestid': randomUUID() };
    if (answer.type) headers['x-amzn-errortype'] = `${answer.type}:http://internal.amazon.com/coral/com.amazonaws.cognito.identity.idp.model/`;
    res.writeHead(answer.status, headers);
    res.end(JSON.stringify(answer.body));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://fake');
    if (state.latencyMs > 0) await new Promise((r) => setTimeout(r, state.latencyMs));

    const record = (target: string, body: unknown, answer: Answer) =>
      state.calls.push({ target, headers: { ...req.headers }, body, status: answer.status });

    if (req.method === 'GET' && url.pathname === `/${userPoolId}/.well-known/jwks.json`) {
      const answer = takeFaultAnswer(url.pathname) ?? ok({ keys: [jwk] });
      record(url.pathname, null, answer);
      return send(res, answer, 'application/json');
    }
    if (req.method === 'GET' && url.pathname === `/${userPoolId}/.well-known/openid-configuration`) {
      return send(res, ok({
        issuer: state.issuer,
        jwks_uri: `${state.issuer}/.well-known/jwks.json`,
        authorization_endpoint: `${baseUrl}/oauth2/authorize`,
        token_endpoint: `${baseUrl}/oauth2/token`,
        id_token_signing_alg_values_supported: ['RS256'],
      }), 'application/json');
    }
    if (req.method === 'POST' && url.pathname === '/oauth2/token') {
      const form = new URLSearchParams(text);
      const answer = takeFaultAnswer(url.pathname) ?? (await tokenEndpoint(form, req.headers.authorization));
      record(url.pathname, Object.fromEntries(form), answer);
      return send(res, answer, 'application/json;charset=UTF-8');
    }
    if (req.method !== 'POST' || url.pathname !== '/') {
      return send(res, exception('UnknownOperationException', `No route for ${req.method} ${url.pathname}`, 404), 'application/x-amz-json-1.1');
    }

    const target = String(req.headers['x-amz-target'] ?? '');
    const operation = target.startsWith(TARGET_PREFIX) ? target.slice(TARGET_PREFIX.length) : '';
    let body: unknown = null;
    let answer: Answer;
    if (!String(req.headers['content-type'] ?? '').startsWith('application/x-amz-json-1.1')) {
      answer = exception('SerializationException', 'Content-Type must be application/x-amz-json-1.1');
    } else {
      try {
        body = text ? JSON.parse(text) : {};
      } catch {
        body = null;
      }
      const run = operations[operation];
      if (!isObject(body)) answer = exception('SerializationException', 'Request body is not a JSON object.');
      else if (!run) answer = exception('UnknownOperationException', `Unknown operation ${target}`);
      else answer = takeFaultAnswer(operation) ?? (await run(body, req));
    }
    record(operation || target, body, answer);
    send(res, answer, 'application/x-amz-json-1.1');
  };

  const takeFaultAnswer = (target: string): Answer | null => {
    const fault = takeFault(target);
    return fault ? exception(fault.type, fault.message, fault.status) : null;
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) send(res, exception('InternalErrorException', String(error), 500), 'application/x-amz-json-1.1');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  baseUrl = `http://127.0.0.1:${port}`;

  return {
    url: baseUrl,
    state,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** PKCE S256: the challenge of a verifier. */
export const codeChallengeOf = (verifier: string): string => createHash('sha256').update(verifier).digest('base64url');
