/**
 * The crash test's long run (docs/benchmarks.md, bench/crash): `npm run bench:crash`. CRASH_KILLS kills (default
 * 200) on PostgreSQL (of the server, a replica and the sweep daemon), and a quarter as many on an embedded PGlite
 * directory (CRASH_PGLITE_KILLS), from CRASH_SEED (default 2929); prints the figures: kills survived by process kind,
 * requests, invariants checked, violations, events delivered, the machine's load.
 */
import { loadavg, cpus } from 'node:os';
import { crashRun, type CrashFigures } from '../test/crash/crash-run.ts';
import { postgresReachable } from '../test/support/database.ts';

const KILLS = Number(process.env.CRASH_KILLS ?? 200);
const PGLITE_KILLS = Number(process.env.CRASH_PGLITE_KILLS ?? Math.ceil(KILLS / 4));
const SEED = Number(process.env.CRASH_SEED ?? 2929);

const runs: CrashFigures[] = [];
const loadBefore = loadavg();
if (await postgresReachable()) {
  runs.push(await crashRun({ storage: 'postgres', seed: SEED, kills: KILLS, log: (line) => process.stderr.write(`${line}\n`) }));
} else {
  console.log('PostgreSQL does not answer: the PostgreSQL run is skipped');
}
if (PGLITE_KILLS > 0) runs.push(await crashRun({ storage: 'pglite', seed: SEED + 1, kills: PGLITE_KILLS, log: (line) => process.stderr.write(`${line}\n`) }));
const loadAfter = loadavg();

console.log(`crash bench, seed ${SEED}, ${cpus().length} cores, load average ${loadBefore[0]!.toFixed(2)} before, ${loadAfter[0]!.toFixed(2)} after (1 min)`);
console.log('| storage | kills survived | by process | at crash points | at random moments | requests | invariants checked | violations | events delivered (deliveries) | slowest key retry after a restart | wall time |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|');
for (const run of runs) {
  const byKind = Object.entries(run.byKind).map(([kind, n]) => `${kind} ${n} (${run.failpointKillsByKind[kind] ?? 0} at a point)`).join(', ');
  console.log(
    `| ${run.storage} | ${run.kills} | ${byKind} | ${run.failpointKills} | ${run.randomKills} | ${run.requests} | ${run.invariantsChecked} | ${run.violations.length} | ${run.eventsDelivered} (${run.webhookDeliveries}) | ${Math.round(run.slowestRetryMs)} ms | ${(run.wallMs / 1000).toFixed(0)} s (${run.starts} starts, ${(run.startMs / 1000).toFixed(0)} s) |`,
  );
}
for (const run of runs) for (const violation of run.violations) console.log(`${run.storage}: ${violation}`);
process.exit(runs.some((run) => run.violations.length > 0) ? 1 : 0);
