import { notFound } from '../../errors.ts';
import type { Clock } from '../../ports/clock.ts';
import type { Storage } from '../../ports/storage.ts';
import type { RentalService } from '../../rentals/rental-service.ts';
import type { Pause } from '../account.ts';

export interface Stopped {
  pause: Pause;
  /** Instances that were stopped by this call. */
  terminated: string[];
}

/** What pausing works with: our records, the clock, and the rentals that stop every machine of a tenant. */
export interface PauseContext {
  storage: Storage;
  clock: Clock;
  rentals: Pick<RentalService, 'terminateAll'>;
}

/** The tenant's emergency stop: renting pauses and every machine stops at once (disks deleted, volumes kept). */
export function emergencyStop(ctx: PauseContext, tenantId: string, reason: string | null): Promise<Stopped> {
  return pauseAndStop(ctx, tenantId, { kind: 'emergency_stop', reason, at: ctx.clock.now() }, false);
}

/** An operator hold: like a stop, and only an operator lifts it. */
export function operatorHold(ctx: PauseContext, tenantId: string, reason: string | null): Promise<Stopped> {
  return pauseAndStop(ctx, tenantId, { kind: 'hold', reason, at: ctx.clock.now() }, true);
}

async function pauseAndStop(ctx: PauseContext, tenantId: string, pause: Pause, overrides: boolean): Promise<Stopped> {
  const effective = await ctx.storage.transaction(async (uow) => {
    const account = await uow.accounts.lock(tenantId, pause.at);
    if (!account) throw notFound(`tenant ${tenantId}`);
    // a hold replaces any pause; a stop keeps a pause already in place (a hold stays a hold)
    if (account.pause && !overrides) return account.pause;
    await uow.accounts.setPause(tenantId, pause);
    return pause;
  });
  const stopped = await ctx.rentals.terminateAll(tenantId);
  return { pause: effective, terminated: stopped.map((instance) => instance.id) };
}
