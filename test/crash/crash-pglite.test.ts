import { describe, expect, it } from 'vitest';
import { CRASH_POINTS } from '../../core/crash-points.ts';
import { crashRun } from './crash-run.ts';

/**
 * The crash test's short run on an embedded PGlite data directory (docs/decisions.md, "Crash anywhere, lose
 * nothing"), beside crash-postgres.test.ts: together at least 50 kills. Embedded means one process: no replica and no
 * sweep daemon here, the server is killed. CRASH_SEED plays a run again.
 */
const SEED = Number(process.env.CRASH_SEED ?? 29) + 1;
const KILLS = 14;

describe('crash anywhere, lose nothing', () => {
  it('on an embedded PGlite directory: killed at every crash point and at random moments, every invariant holds', async () => {
    const figures = await crashRun({ storage: 'pglite', seed: SEED, kills: KILLS });
    console.log(`crash test on PGlite: ${JSON.stringify(figures)}`);
    expect(figures.violations).toEqual([]);
    expect(figures.kills).toBe(KILLS);
    for (const point of CRASH_POINTS) expect(figures.byPoint[point], point).toBeGreaterThanOrEqual(1);
    expect(figures.failpointKills).toBeGreaterThanOrEqual(CRASH_POINTS.length);
    expect(figures.eventsDelivered).toBeGreaterThan(20);
    expect(figures.invariantsChecked).toBeGreaterThan(300);
  }, 420_000);
});
