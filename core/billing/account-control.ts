import { DomainError, notFound } from '../errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { Storage } from '../ports/storage.ts';
import type { RentalService } from '../rentals/rental-service.ts';
import type { Pause } from './account.ts';
import { accountFigures } from './account-view.ts';

export interface Stopped {
  pause: Pause;
  /** Instances that were stopped by this call. */
  terminated: string[];
}

/** Pausing and reopening renting: the tenant's emergency stop and resume, the operator's hold and resume. */
export class AccountControl {
  private readonly storage: Storage;
  private readonly clock: Clock;
  private readonly rentals: RentalService;

  constructor(deps: { storage: Storage; clock: Clock; rentals: RentalService }) {
    this.storage = deps.storage;
    this.clock = deps.clock;
    this.rentals = deps.rentals;
  }

  /** Emergency stop: renting pauses and every machine stops at once (disks deleted, volumes kept). */
  stop(tenantId: string, reason: string | null): Promise<Stopped> {
    return this.pauseAndStop(tenantId, { kind: 'emergency_stop', reason, at: this.clock.now() }, false);
  }

  /** An operator hold: like a stop, and only an operator lifts it. */
  hold(tenantId: string, reason: string | null): Promise<Stopped> {
    return this.pauseAndStop(tenantId, { kind: 'hold', reason, at: this.clock.now() }, true);
  }

  /** The tenant reopens renting after an emergency stop, or after a tripped breaker once funds are in. */
  async resume(tenantId: string): Promise<void> {
    await this.storage.transaction(async (uow) => {
      const now = this.clock.now();
      const account = await uow.accounts.lock(tenantId, now);
      if (!account) throw notFound(`tenant ${tenantId}`);
      if (!account.pause) return;
      if (account.pause.kind === 'hold') {
        throw new DomainError('CONFLICT', 'renting is on an operator hold; only an operator can lift it');
      }
      if (account.pause.kind === 'breaker') {
        const figures = accountFigures(account.balanceCents, await uow.instances.live(tenantId), now, { stopsAt: false, unsettledUsageCents: await uow.usage.unsettledCents(tenantId) });
        if (figures.availableCents <= 0) {
          throw new DomainError('CONFLICT', `the breaker tripped because funds ran out; ${figures.availableCents} cents are available, add funds first`);
        }
      }
      await uow.accounts.setPause(tenantId, null);
    });
  }

  /** The operator lifts any pause. */
  async operatorResume(tenantId: string): Promise<void> {
    await this.storage.transaction(async (uow) => {
      const account = await uow.accounts.lock(tenantId, this.clock.now());
      if (!account) throw notFound(`tenant ${tenantId}`);
      await uow.accounts.setPause(tenantId, null);
    });
  }

  private async pauseAndStop(tenantId: string, pause: Pause, overrides: boolean): Promise<Stopped> {
    const effective = await this.storage.transaction(async (uow) => {
      const account = await uow.accounts.lock(tenantId, pause.at);
      if (!account) throw notFound(`tenant ${tenantId}`);
      // a hold replaces any pause; a stop keeps a pause already in place (a hold stays a hold)
      if (account.pause && !overrides) return account.pause;
      await uow.accounts.setPause(tenantId, pause);
      return pause;
    });
    const stopped = await this.rentals.terminateAll(tenantId);
    return { pause: effective, terminated: stopped.map((instance) => instance.id) };
  }
}
