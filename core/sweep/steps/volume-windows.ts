import type { PassCounts } from '../pass-report.ts';
import type { SweepStep } from '../step.ts';

/** What the step needs of volumes: those whose hours ended deleted (core/volumes/volume-expiry.ts). */
export interface VolumeWindows {
  deleteExpired(): Promise<{ expired: number; errors: string[] }>;
}

export type VolumeWindowsReport = Pick<PassCounts, 'volumesExpired'> & { errors: string[] };

/** `volume windows`: volumes whose window (hours) ended are deleted. */
export const volumeWindows = (windows: VolumeWindows): SweepStep<VolumeWindowsReport> => ({
  name: 'volume windows',
  report: () => ({ volumesExpired: 0, errors: [] }),
  async run(report) {
    const ended = await windows.deleteExpired();
    report.volumesExpired += ended.expired;
    report.errors.push(...ended.errors);
  },
});
