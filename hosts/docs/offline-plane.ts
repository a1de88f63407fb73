import { pino } from 'pino';
import type { ControlPlaneConfig } from '../composition/config.ts';
import { createControlPlane, type ControlPlane } from '../composition/control-plane.ts';

/**
 * A control plane on an in-memory embedded database with the default configuration: its route table and
 * OpenAPI document exactly as a server serves them, with no server, no network and nothing left behind.
 * The generators (typed client, docs/api.md) and the API lint read the document from here.
 */
export async function withOfflinePlane<T>(use: (plane: ControlPlane) => Promise<T> | T, config: Partial<ControlPlaneConfig> = {}): Promise<T> {
  const plane = await createControlPlane(
    {
      storage: { kind: 'pglite', dataDir: 'memory://' },
      operatorKeys: [],
      rateLimits: { publicPerMinute: 1, perTokenPerMinute: 1 },
      logLevel: 'silent',
      market: { backgroundRefresh: false },
      billing: { sweep: false },
      webhooks: { delivery: false },
      ...config,
    },
    { logger: pino({ level: 'silent' }) },
  );
  try {
    return await use(plane);
  } finally {
    await plane.close();
  }
}
