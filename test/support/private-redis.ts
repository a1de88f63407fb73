import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createConnection, createServer } from 'node:net';

/** Whether this machine can start a redis-server of a test's own; REQUIRE_REDIS=1 (CI) makes "cannot" a failure. */
export function canRunPrivateRedis(): boolean {
  const can = spawnSync('redis-server', ['--version']).status === 0;
  if (!can && process.env.REQUIRE_REDIS === '1') throw new Error('REQUIRE_REDIS=1 but redis-server is not on the PATH');
  return can;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const accepts = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => (socket.end(), resolve(true)));
    socket.once('error', () => resolve(false));
  });

/**
 * A redis-server of one test's own (nothing kept on disk), so the test may kill and restart it without touching
 * the shared one other tests use.
 */
export interface PrivateRedis {
  url: string;
  /** SIGKILL: every connection drops at once. */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty). */
  start(): Promise<void>;
  /** SIGSTOP: connections stay open and nothing answers. */
  freeze(): void;
  thaw(): void;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    // it listens within milliseconds; a connection attempt is the event waited for
    const deadline = performance.now() + 10_000;
    while (!(await accepts(port))) {
      if (performance.now() > deadline) throw new Error(`redis-server on ${port} did not start within 10 s`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  await start();
  // a test worker that ends without its afterAll must not leave the server running
  process.once('exit', () => child?.kill('SIGKILL'));
  return {
    url: `redis://127.0.0.1:${port}`,
    async kill() {
      const running = child;
      running?.kill('SIGCONT');
      if (!running || running.exitCode !== null || running.signalCode !== null) return;
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGKILL');
      await exited;
    },
    start,
    freeze: () => void child?.kill('SIGSTOP'),
    thaw: () => void child?.kill('SIGCONT'),
  };
}
