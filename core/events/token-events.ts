import type { Token } from '../tenancy/token.ts';
import type { NewEvent } from './event.ts';

/** What the sweep ended when a token timed out idle (core/sweep/steps/idle-tokens.ts). */
export interface IdleEnding {
  tokensEnded: readonly string[];
  instancesTerminated: readonly string[];
  reservationsCancelled: readonly string[];
  spotClaimsReleased: readonly string[];
}

export const idleTimeoutEvent = (token: Token, deadline: Date, ended: IdleEnding, at: Date): NewEvent => ({
  tenantId: token.tenantId,
  type: 'token.idle_timeout',
  data: {
    token_id: token.id,
    name: token.name,
    idle_timeout_minutes: token.idleTimeoutMinutes,
    idle_deadline_at: deadline.toISOString(),
    tokens_ended: ended.tokensEnded,
    instances_terminated: ended.instancesTerminated,
    reservations_cancelled: ended.reservationsCancelled,
    spot_claims_released: ended.spotClaimsReleased,
  },
  at,
});
