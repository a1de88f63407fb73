import type { Token } from '../tenancy/token.ts';
import type { Clock } from '../ports/clock.ts';
import type { Storage } from '../ports/storage.ts';
import type { RentalService } from '../rentals/rental-service.ts';
import { emergencyStop, operatorHold, type PauseContext, type Stopped } from './accounts/pause.ts';
import { operatorResume, resumeRenting } from './accounts/resume.ts';

/**
 * Pausing and reopening renting: the tenant's emergency stop and resume, the operator's hold and resume. Each is a
 * use case of core/billing/accounts (pause.ts, resume.ts); this object hands them what they work with.
 */
export class AccountControl {
  private readonly context: PauseContext;

  constructor(deps: { storage: Storage; clock: Clock; rentals: Pick<RentalService, 'terminateAll'> }) {
    this.context = { storage: deps.storage, clock: deps.clock, rentals: deps.rentals };
  }

  stop(tenantId: string, reason: string | null): Promise<Stopped> {
    return emergencyStop(this.context, tenantId, reason);
  }

  hold(tenantId: string, reason: string | null): Promise<Stopped> {
    return operatorHold(this.context, tenantId, reason);
  }

  resume(caller: Token): Promise<void> {
    return resumeRenting(this.context, caller);
  }

  operatorResume(tenantId: string): Promise<void> {
    return operatorResume(this.context, tenantId);
  }
}
