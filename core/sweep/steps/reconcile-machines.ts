import { Reconciler, type ReconcileCounts } from '../../billing/reconciler.ts';
import type { Provider } from '../../ports/providers.ts';
import type { SweepStep } from '../step.ts';

/**
 * `reconcile <provider>`: the provider's machines and our rentals brought together (core/billing/reconciler.ts):
 * ambiguous creates adopted, machines that never started failed and refunded, machines gone upstream closed,
 * preempted spot machines ended, terminations retried, orphans removed. Past the budget no further item is taken up.
 */
export const reconcileMachines = (reconciler: Reconciler, provider: Provider): SweepStep<ReconcileCounts> => ({
  name: `reconcile ${provider.name}`,
  report: () => ({ adopted: 0, failedProvisioning: 0, goneUpstream: 0, orphansTerminated: 0, terminationsRetried: 0, preempted: 0, errors: [] }),
  run: (report, { budget }) => reconciler.reconcile(provider, report, budget),
});
