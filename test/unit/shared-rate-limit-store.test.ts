import { once } from 'node:events';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { Options } from 'express-rate-limit';
import type { RedisClientType } from 'redis';
import { afterEach, describe, expect, it } from 'vitest';
import { SharedRateLimitStore } from '../../hosts/http/shared-rate-limit-store.ts';

/**
 * A stand-in for Redis whose answers travel through a real loopback socket: each command writes a byte that is in
 * the other end's buffer at once, and its answer is given when that end's `data` event runs (an I/O callback), as
 * a real Redis answer is. `SCRIPT LOAD` answers a digest, `EVALSHA` (rate-limit-redis's increment) a count.
 */
async function loopbackRedis(): Promise<{ client: RedisClientType; sent: () => number; close(): Promise<void> }> {
  const server: Server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const writer: Socket = createConnection((server.address() as { port: number }).port, '127.0.0.1');
  const [reader] = (await once(server, 'connection')) as [Socket];
  await once(writer, 'connect');
  const waiting: (() => void)[] = [];
  reader.on('data', (bytes: Buffer) => {
    for (let i = 0; i < bytes.length; i++) waiting.shift()?.();
  });
  let sent = 0;
  let hits = 0;
  const client = {
    isReady: true,
    sendCommand: (args: string[]) =>
      new Promise((resolve) => {
        const answer = args[0] === 'SCRIPT' ? 'digest' : [++hits, 60_000];
        waiting.push(() => resolve(answer));
        sent++;
        writer.write('x');
      }),
  } as unknown as RedisClientType;
  return {
    client,
    sent: () => sent,
    close: async () => {
      writer.destroy();
      reader.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Holds the process's only thread, as a loaded machine or a burst of requests does. */
const stall = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

describe('the shared rate-limit store', () => {
  it('counts in Redis an answer that arrived while the process was stalled past the timeout (a late timer is not a late Redis)', async () => {
    const redis = await loopbackRedis();
    closing.push(redis.close);
    const errors: unknown[] = [];
    const store = new SharedRateLimitStore(redis.client, 'rl:', (error) => errors.push(error));
    store.init({ windowMs: 60_000 } as Options);
    await store.increment('warm-up'); // the script is loaded
    expect(errors).toEqual([]);

    const before = redis.sent();
    const counted = store.increment('token');
    // the command is written (its answer is in the socket's buffer) before the process stalls past the 250 ms
    for (let turns = 0; turns < 100 && redis.sent() === before; turns++) await Promise.resolve();
    expect(redis.sent()).toBe(before + 1);
    stall(400);
    const info = await counted;
    expect(errors).toEqual([]);
    // Redis's count (the second hit it answered), not the replica's own memory (which would say 1)
    expect(info.totalHits).toBe(2);
  });
});
