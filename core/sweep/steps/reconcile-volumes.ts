import type { Provider, VolumeHost } from '../../ports/providers.ts';
import type { VolumeReconcileCounts, VolumeReconciler } from '../../volumes/volume-reconciler.ts';
import type { SweepStep } from '../step.ts';

/**
 * `reconcile volumes <provider>`: volumes whose create had no answer adopted by their label or failed at the
 * deadline, and upstream volumes nobody pays for deleted (core/volumes/volume-reconciler.ts).
 */
export const reconcileVolumes = (reconciler: VolumeReconciler, host: Provider & VolumeHost): SweepStep<VolumeReconcileCounts> => ({
  name: `reconcile volumes ${host.name}`,
  report: () => ({ volumesAdopted: 0, volumesFailed: 0, volumeOrphansDeleted: 0, errors: [] }),
  run: (report) => reconciler.reconcile(host, report),
});
