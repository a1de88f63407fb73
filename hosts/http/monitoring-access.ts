import { createHash, timingSafeEqual } from 'node:crypto';
import { operatorKeyMatcher } from './operator-keys.ts';

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** Who may read /metrics: an operator key, or the scraper's own token (METRICS_TOKEN), compared in constant time. */
export interface MonitoringAccess {
  /** The operator key's rate-limit name, `metrics-token` for the token, or null. */
  callerOf(operatorKey: string | undefined, authorization: string | undefined): string | null;
  refusal: string;
}

export function monitoringAccess(operatorKeys: readonly string[], metricsToken: string | undefined): MonitoringAccess {
  const operatorKeyOf = operatorKeyMatcher(operatorKeys);
  const token = metricsToken ? digest(metricsToken) : null;
  return {
    callerOf(operatorKey, authorization) {
      const key = operatorKeyOf(operatorKey);
      if (key) return key;
      const bearer = authorization === undefined ? undefined : BEARER.exec(authorization)?.[1];
      return token && bearer && timingSafeEqual(token, digest(bearer)) ? 'metrics-token' : null;
    },
    refusal:
      operatorKeys.length === 0 && !metricsToken
        ? 'no credential for metrics is configured on this server; set METRICS_TOKEN (at least 16 characters) or OPERATOR_KEYS and restart it'
        : 'missing or wrong credential; send the X-Service-Operator-Key header or Authorization: Bearer <METRICS_TOKEN>',
  };
}
