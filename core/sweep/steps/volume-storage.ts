import type { PassCounts } from '../pass-report.ts';
import type { SweepStep } from '../step.ts';

/** What the step needs of volumes: each started hour of each volume's storage made a usage record, once (core/volumes/volume-meter.ts). */
export interface VolumeStorageMeter {
  recordStorage(): Promise<{ recorded: number; errors: string[] }>;
}

export type VolumeStorageReport = Pick<PassCounts, 'volumeHoursRecorded'> & { errors: string[] };

/** `volume storage`: the hours of volume storage since the last pass become usage records. */
export const volumeStorage = (volumes: VolumeStorageMeter): SweepStep<VolumeStorageReport> => ({
  name: 'volume storage',
  report: () => ({ volumeHoursRecorded: 0, errors: [] }),
  async run(report) {
    const storage = await volumes.recordStorage();
    report.volumeHoursRecorded += storage.recorded;
    report.errors.push(...storage.errors);
  },
});
