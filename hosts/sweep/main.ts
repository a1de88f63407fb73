import { Cron } from 'croner';
import { describeTarget } from '../../adapters/storage/mikro-storage.ts';
import { SchemaAheadError } from '../../adapters/storage/migration-lock.ts';
import { ConfigError, configFromEnv } from '../composition/config.ts';
import { createControlPlane } from '../composition/control-plane.ts';
import { crashOverrides, crashSweepPattern, installCrashAt } from '../composition/crash-at.ts';
import { sweepFailed } from '../composition/sweep-log.ts';
import { listenMetrics } from './metrics-server.ts';

/**
 * The billing sweep as its own process (`npm run sweep`): every minute, or once with `--once`. It needs
 * PostgreSQL (DATABASE_URL): an embedded PGlite directory belongs to the server process, which runs the
 * sweep itself. Several daemons and servers may run; the advisory lock lets one pass run its money steps at a time,
 * and every one of them takes its share of the due starts (docs/operations.md, Slow clouds).
 */
async function main(): Promise<void> {
  const config = configFromEnv();
  installCrashAt();
  if (config.storage.kind !== 'postgres') {
    throw new ConfigError('the standalone sweep needs DATABASE_URL (PostgreSQL); on embedded PGlite the server runs the sweep itself');
  }
  const plane = await createControlPlane({ ...config, billing: { ...config.billing, sweep: false }, market: { ...config.market, backgroundRefresh: false } }, crashOverrides());
  plane.logger.info({ storage: describeTarget(config.storage) }, 'billing sweep daemon started');
  const pass = async () => {
    const report = await plane.services.sweep.run();
    plane.logger.info({ sweep: report }, report.ran ? 'billing sweep' : 'billing sweep skipped: another runner holds it');
  };

  if (process.argv.includes('--once')) {
    await pass();
    await plane.close();
    return;
  }
  // METRICS_PORT: the daemon's own /metrics (sweep passes, provider calls, ledger), same credentials as the API's
  const metricsPort = config.metrics?.port;
  const metricsServer = metricsPort === undefined ? null : listenMetrics(plane.metrics, { operatorKeys: config.operatorKeys, metricsToken: config.metrics?.token }, metricsPort, config.host);
  metricsServer?.on('error', (error) => {
    plane.logger.fatal({ err: error, port: metricsPort }, 'the sweep daemon cannot serve metrics on METRICS_PORT');
    process.exit(1);
  });
  metricsServer?.once('listening', () => plane.logger.info({ port: metricsPort }, `sweep daemon metrics on http://localhost:${metricsPort}/metrics`));
  const job = new Cron(crashSweepPattern() ?? '30 * * * * *', { protect: true, catch: sweepFailed(plane.logger) }, pass);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      plane.logger.warn({ signal }, 'second signal: exiting at once');
      process.exit(1);
    }
    stopping = true;
    plane.logger.info({ signal, graceMs: config.shutdownGraceMs }, 'stopping the sweep daemon: the pass in flight ends its money step');
    setTimeout(() => {
      plane.logger.error({ graceMs: config.shutdownGraceMs }, 'the pass in flight did not end within SHUTDOWN_GRACE_MS; exiting');
      process.exit(1);
    }, config.shutdownGraceMs).unref();
    job.stop();
    metricsServer?.close();
    // plane.close() waits for the pass in flight, which stops before its next money step
    await plane.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(2);
  }
  console.error('billing sweep failed:', error instanceof SchemaAheadError ? error.message : error);
  process.exit(1);
});
