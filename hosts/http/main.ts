import type { Server } from 'node:http';
import { describeTarget } from '../../adapters/storage/mikro-storage.ts';
import { SchemaAheadError } from '../../adapters/storage/migration-lock.ts';
import { ConfigError, configFromEnv } from '../composition/config.ts';
import { createControlPlane } from '../composition/control-plane.ts';
import { crashOverrides, installCrashAt } from '../composition/crash-at.ts';
import { createHttpApp } from './app.ts';
import { listenHttp } from './server.ts';

async function main(): Promise<void> {
  const config = configFromEnv();
  installCrashAt();
  const plane = await createControlPlane(config, crashOverrides());
  const app = createHttpApp(plane, { trustProxy: config.trustProxy });
  const server: Server = listenHttp(app, config.port, config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  plane.logger.info(
    { port, storage: describeTarget(config.storage), providers: plane.services.market.providerNames, rentalsOpen: plane.services.market.settings.rentalsOpen },
    `gpu-control-plane listening on http://localhost:${port}`,
  );
  // Fetch every provider's offers now, so the first search does not wait for them.
  void plane.services.market.refreshDue();

  // after SIGTERM, each answer that ends lets its connection go: a client's keep-alive must not hold the shutdown
  let stopping = false;
  server.on('request', (_req, res) => res.once('finish', () => stopping && setImmediate(() => server.closeIdleConnections())));
  const stop = async (signal: string) => {
    if (stopping) {
      // the operator insists: nothing more is waited for; what was committed stays committed
      plane.logger.warn({ signal }, 'second signal: exiting at once');
      process.exit(1);
    }
    stopping = true;
    const graceMs = config.shutdownGraceMs;
    plane.logger.info({ signal, graceMs }, 'shutting down: no new requests; finishing those in flight and the sweep pass');
    // a pass in flight stops before its next money step, at once, not once the requests are done
    const sweepStopped = plane.services.sweep.stop();
    const force = setTimeout(() => {
      plane.logger.warn({ graceMs }, 'requests still open after SHUTDOWN_GRACE_MS; closing them');
      server.closeAllConnections();
    }, graceMs).unref();
    setTimeout(() => {
      plane.logger.error({ graceMs }, 'shutdown did not finish 5 s after SHUTDOWN_GRACE_MS; exiting');
      process.exit(1);
    }, graceMs + 5_000).unref();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    await closed;
    clearTimeout(force);
    await sweepStopped;
    await plane.close();
    plane.logger.info('stopped');
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
  // a newer version migrated the database: the message says what to do, a stack would only bury it
  console.error('gpu-control-plane failed to start:', error instanceof SchemaAheadError ? error.message : error);
  process.exit(1);
});
