/** Cognito's settings and how they are read from the environment: loaded without the AWS SDK. */

export type Env = Record<string, string | undefined>;

export interface CognitoIdentityConfig {
  /** The pool's region, e.g. "eu-west-1". */
  region: string;
  /** "<region>_<id>", e.g. "eu-west-1_AbCdEf123". */
  userPoolId: string;
  /** The app client: ALLOW_USER_PASSWORD_AUTH on; for the hosted UI, the code grant with the openid scope. */
  clientId: string;
  /** The app client's secret, when it has one: every call then carries SECRET_HASH. Never shown. */
  clientSecret?: string;
  /** The hosted UI's base URL (https://<prefix>.auth.<region>.amazoncognito.com or a custom domain). */
  domain?: string;
  /**
   * Another base URL for the user pool API (tests: the local fake), also taken as the issuer base:
   * tokens are then expected from `${endpoint}/${userPoolId}`, with the JWKS below it.
   */
  endpoint?: string;
  /** For AdminCreateUser (invite) only; default: the AWS SDK's default credential chain. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Per request, default 10 000 ms. */
  timeoutMs?: number;
  /** The SDK's attempts per call on throttling, 5xx and lost connections, default 3. */
  maxAttempts?: number;
  /** Leeway for an id token's exp and iat against our clock, default 30 s. */
  clockToleranceSeconds?: number;
}


export const trimSlash = (url: string): string => url.replace(/\/+$/, '');

const REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/;
const POOL_ID = /^([a-z]{2}(?:-[a-z]+)+-\d+)_[0-9A-Za-z]+$/;
const CLIENT_ID = /^[\w+]+$/;

function url(env: Env, name: string, example: string): string | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  // a bare host ("myapp.auth.eu-west-1.amazoncognito.com") is taken as https
  const text = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `https://${raw}`;
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    throw new Error(`${name}: must be an http(s) URL such as ${example}, got "${raw}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`${name}: must be an http(s) URL such as ${example}, got "${raw}"`);
  if (parsed.search || parsed.hash) throw new Error(`${name}: must be a base URL without query or fragment, got "${raw}"`);
  return trimSlash(text);
}

/**
 * The Cognito settings from the environment, or null when none of COGNITO_REGION, COGNITO_USER_POOL_ID
 * and COGNITO_CLIENT_ID is set (the built-in provider stays). A partial or malformed set throws an Error
 * naming the variables to fix. AWS credentials (for invite) come from the SDK's default chain
 * (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, a role), not from here.
 */
export function fromEnv(env: Env): CognitoIdentityConfig | null {
  const required = ['COGNITO_REGION', 'COGNITO_USER_POOL_ID', 'COGNITO_CLIENT_ID'] as const;
  const value = (name: string) => env[name]?.trim() || undefined;
  const missing = required.filter((name) => !value(name));
  if (missing.length === required.length) {
    const stray = ['COGNITO_CLIENT_SECRET', 'COGNITO_DOMAIN', 'COGNITO_ENDPOINT'].filter((name) => value(name));
    if (stray.length > 0) {
      throw new Error(`${stray.join(', ')}: set, but ${required.join(', ')} are not; set all three to use Cognito, or unset ${stray.join(', ')}`);
    }
    return null;
  }
  if (missing.length > 0) {
    throw new Error(`${missing.join(', ')}: not set; Cognito needs ${required.join(', ')} together (or none of them for the built-in sign-in)`);
  }
  const region = value('COGNITO_REGION')!;
  const userPoolId = value('COGNITO_USER_POOL_ID')!;
  const clientId = value('COGNITO_CLIENT_ID')!;
  if (!REGION.test(region)) throw new Error(`COGNITO_REGION: must be an AWS region such as eu-west-1, got "${region}"`);
  const pool = POOL_ID.exec(userPoolId);
  if (!pool) throw new Error(`COGNITO_USER_POOL_ID: must look like ${region}_AbCdEf123, got "${userPoolId}"`);
  if (pool[1] !== region) throw new Error(`COGNITO_USER_POOL_ID: the pool "${userPoolId}" is in ${pool[1]}, but COGNITO_REGION is ${region}`);
  if (!CLIENT_ID.test(clientId)) throw new Error(`COGNITO_CLIENT_ID: must be the app client id (letters and digits), got "${clientId}"`);
  const clientSecret = value('COGNITO_CLIENT_SECRET');
  const domain = url(env, 'COGNITO_DOMAIN', `https://myapp.auth.${region}.amazoncognito.com`);
  const endpoint = url(env, 'COGNITO_ENDPOINT', 'http://127.0.0.1:9229');
  return {
    region,
    userPoolId,
    clientId,
    ...(clientSecret && { clientSecret }),
    ...(domain && { domain }),
    ...(endpoint && { endpoint }),
  };
}
