import type { Identity } from '../../../core/ports/identity.ts';
import { CognitoIdentity } from './adapter.ts';
import { CognitoClient } from './client.ts';
import { IdTokenVerifier } from './jwks.ts';

import { trimSlash, type CognitoIdentityConfig } from './config.ts';

export { fromEnv, trimSlash, type CognitoIdentityConfig, type Env } from './config.ts';
export { CognitoIdentity } from './adapter.ts';
export { IdTokenRejected } from './jwks.ts';

/** The issuer of the pool's tokens: Cognito's regional URL, or the endpoint given for tests. */
export const issuerOf = (config: Pick<CognitoIdentityConfig, 'region' | 'userPoolId' | 'endpoint'>): string =>
  `${config.endpoint ? trimSlash(config.endpoint) : `https://cognito-idp.${config.region}.amazonaws.com`}/${config.userPoolId}`;

export function createCognitoIdentity(config: CognitoIdentityConfig): Identity {
  for (const key of ['region', 'userPoolId', 'clientId'] as const) {
    if (!config[key]) throw new Error(`cognito: ${key} is required`);
  }
  const timeoutMs = config.timeoutMs ?? 10_000;
  const domain = config.domain ? trimSlash(config.domain) : null;
  const client = new CognitoClient({
    region: config.region,
    userPoolId: config.userPoolId,
    clientId: config.clientId,
    clientSecret: config.clientSecret || null,
    endpoint: config.endpoint ? trimSlash(config.endpoint) : null,
    domain,
    credentials: config.credentials ?? null,
    timeoutMs,
    maxAttempts: config.maxAttempts ?? 3,
  });
  const verifier = new IdTokenVerifier({
    issuer: issuerOf(config),
    clientId: config.clientId,
    timeoutMs,
    clockToleranceSeconds: config.clockToleranceSeconds ?? 30,
  });
  return new CognitoIdentity(client, verifier, { region: config.region, userPoolId: config.userPoolId, clientId: config.clientId, domain });
}

