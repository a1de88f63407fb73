import { randomBytes } from 'node:crypto';
import { createConnection } from 'node:net';

/** The Redis tests share (TEST_REDIS_URL, default the local server); each test takes a key prefix of its own. */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export const freshRedisPrefix = (): string => `gcp-test-${randomBytes(4).toString('hex')}:`;

let reachable: Promise<boolean> | undefined;

/** Whether Redis answers; REQUIRE_REDIS=1 (CI) makes "no server" a failure instead of a skip. */
export function redisReachable(): Promise<boolean> {
  reachable ??= new Promise<boolean>((resolve) => {
    const { hostname, port } = new URL(TEST_REDIS_URL);
    const socket = createConnection({ host: hostname, port: Number(port || 6379) });
    socket.setTimeout(1_000, () => (socket.destroy(), resolve(false)));
    socket.once('connect', () => (socket.end(), resolve(true)));
    socket.once('error', () => resolve(false));
  }).then((up) => {
    if (!up && process.env.REQUIRE_REDIS === '1') throw new Error(`REQUIRE_REDIS=1 but Redis at ${TEST_REDIS_URL} does not answer`);
    return up;
  });
  return reachable;
}
