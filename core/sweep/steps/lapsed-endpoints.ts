import { isolated } from '../../billing/isolated.ts';
import type { Clock } from '../../ports/clock.ts';
import type { Storage } from '../../ports/storage.ts';
import type { StepReport } from '../pass-report.ts';
import type { SweepStep } from '../step.ts';
import { disableLapsedEndpoints } from '../../webhooks/lapsed-endpoints.ts';

/** Endpoints read per batch; a pass takes batches until none is left or its budget is over. */
const BATCH = 200;

/**
 * `lapsed-endpoints` (docs/decisions.md, "One tree of authority"): nothing happens at the instant a registrant's chain
 * expires or passes its idle deadline, so the endpoints it registered are disabled, with why, at the next pass (a
 * delivery due before that is refused and disables it then: core/webhooks/delivery-worker.ts). Revocations, removals
 * and role changes disable theirs in their own transaction; this finds the rest.
 */
export const lapsedEndpoints = (deps: { storage: Storage; clock: Clock }): SweepStep => ({
  name: 'lapsed-endpoints',
  report: (): StepReport => ({ errors: [] }),
  async run(report, { budget }) {
    const now = deps.clock.now();
    let after: string | null = null;
    while (!budget.over()) {
      const due = await deps.storage.read((uow) => uow.webhooks.lapseCandidates(now, after, BATCH));
      const tenants = new Set(due.map((candidate) => candidate.tenantId));
      for (const tenantId of tenants) {
        await isolated(report.errors, `lapsed webhook endpoints of ${tenantId}`, () => deps.storage.transaction((uow) => disableLapsedEndpoints(uow, tenantId, now)));
      }
      if (due.length < BATCH) break;
      after = due.at(-1)!.endpointId;
    }
  },
});
