import type { Server } from 'node:http';
import { describeTarget } from '../../adapters/storage/mikro-storage.ts';
import { SchemaAheadError } from '../../adapters/storage/migration-lock.ts';
import { ConfigError, configFromEnv } from '../composition/config.ts';
import { createControlPlane } from '../composition/control-plane.ts';
import { createHttpApp } from './app.ts';
import { listenHttp } from './server.ts';

const SHUTDOWN_GRACE_MS = 10_000;

async function main(): Promise<void> {
  const config = configFromEnv();
  const plane = await createControlPlane(config);
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

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    plane.logger.info({ signal }, 'shutting down: finishing requests in flight');
    const force = setTimeout(() => {
      plane.logger.warn('requests still open after the grace period; closing them');
      server.closeAllConnections();
    }, SHUTDOWN_GRACE_MS).unref();
    server.closeIdleConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    clearTimeout(force);
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
