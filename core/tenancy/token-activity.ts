import { DomainError } from '../errors.ts';
import type { TenancyContext } from './context.ts';
import type { Token } from './token.ts';

/**
 * How often a token's activity is written, at most: every request is activity, but a busy token costs one write a
 * minute per replica, not one per request. The deadline recorded is therefore up to this much earlier than the last
 * request plus the timeout (docs/decisions.md, "Dead-man switch").
 */
export const ACTIVITY_WRITE_EVERY_MS = 60_000;

/**
 * Records a request of `token` as activity of it and of every ancestor (an agent's child keeps its issuer alive).
 * Only a token with an idle timeout can have ancestors with one (a child of one needs one: token-terms.ts), so any
 * other costs nothing. Answers the token as this replica now knows it: its deadline moved when it was written here.
 */
export async function recordActivity(ctx: TenancyContext, token: Token): Promise<Token> {
  if (token.idleTimeoutMinutes === null || token.idleDeadlineAt === null) return token;
  const now = ctx.clock.now();
  const recordedAt = token.idleDeadlineAt.getTime() - token.idleTimeoutMinutes * 60_000;
  if (now.getTime() - recordedAt < ACTIVITY_WRITE_EVERY_MS || !ctx.activity.claim(token.id)) return token;
  let deadline: Date | null;
  try {
    deadline = await ctx.storage.autocommit((uow) => uow.tokens.recordActivity([token.id, ...token.ancestorIds], now, ACTIVITY_WRITE_EVERY_MS));
  } catch {
    // the request goes on: its token was valid; the next one writes
    return token;
  } finally {
    ctx.activity.done(token.id);
  }
  if (deadline === null || deadline.getTime() === token.idleDeadlineAt?.getTime()) return token;
  const moved: Token = { ...token, idleDeadlineAt: deadline };
  ctx.recent.put(moved);
  return moved;
}

/** The refusal of a token past its idle deadline, saying so (a 401 like any other refused token). */
export const timedOutIdle = (token: Token): DomainError =>
  new DomainError(
    'UNAUTHENTICATED',
    `token timed out idle at ${(token.idledAt ?? token.idleDeadlineAt)!.toISOString()}: no request from it or any token it issued ` +
      `within its idle_timeout_minutes (${token.idleTimeoutMinutes}), or the token that issued it timed out; the machines rented ` +
      'under it are terminated; issue a new token',
  );
