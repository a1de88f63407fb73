import { describe, expect, it } from 'vitest';
import { CRASH_POINTS } from '../../core/crash-points.ts';
import { postgresReachable } from '../support/database.ts';
import { crashRun } from './crash-run.ts';

/**
 * The crash test's short run on PostgreSQL (docs/decisions.md, "Crash anywhere, lose nothing"; crash-pglite.test.ts
 * runs beside it, `npm run bench:crash` the long run): a server, a replica and the sweep daemon over an upstream cloud
 * of its own, one of them killed with SIGKILL at every named crash point and at seeded random moments, nothing lost.
 * CRASH_SEED plays a run again.
 */
const SEED = Number(process.env.CRASH_SEED ?? 29);
const KILLS = 36;

describe('crash anywhere, lose nothing', () => {
  it('on PostgreSQL: the server, a replica or the sweep daemon killed at every crash point and at random moments, every invariant holds', async () => {
    if (!(await postgresReachable())) throw new Error('the crash test needs PostgreSQL (TEST_DATABASE_URL)');
    const figures = await crashRun({ storage: 'postgres', seed: SEED, kills: KILLS });
    console.log(`crash test on PostgreSQL: ${JSON.stringify(figures)}`);
    expect(figures.violations).toEqual([]);
    expect(figures.kills).toBe(KILLS);
    for (const point of CRASH_POINTS) expect(figures.byPoint[point], point).toBeGreaterThanOrEqual(1);
    // every crash point reached and killed there, each more than once
    expect(figures.failpointKills).toBeGreaterThanOrEqual(2 * CRASH_POINTS.length);
    // each kind of process killed, the daemon and the servers at crash points too
    for (const kind of ['server', 'replica', 'daemon']) expect(figures.byKind[kind], kind).toBeGreaterThanOrEqual(1);
    expect(figures.failpointKillsByKind.daemon).toBeGreaterThanOrEqual(1);
    expect(figures.failpointKillsByKind.server! + figures.failpointKillsByKind.replica!).toBeGreaterThanOrEqual(1);
    expect(figures.eventsDelivered).toBeGreaterThan(50);
    expect(figures.invariantsChecked).toBeGreaterThan(1_000);
  }, 420_000);
});
