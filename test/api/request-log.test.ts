import type { AddressInfo } from 'node:net';
import express from 'express';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { requestLog } from '../../hosts/http/request-log.ts';

/** An app whose routes answer the status in their path, logging through requestLog at `level`. */
async function withApp(level: string, work: (base: string, lines: Record<string, any>[], closed: (count: number) => Promise<void>) => Promise<void>): Promise<void> {
  const lines: Record<string, any>[] = [];
  const logger = pino({ level }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const app = express();
  app.use(requestLog(logger));
  app.get('/status/:code', (req, res) => {
    res.status(Number(req.params.code)).json({ ok: true });
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  // the line of an answer is written when the answer's 'close' comes, which can be just after the client has it:
  // `closed(n)` waits for the n-th 'close' (the line is written in the same emit, before this resolves)
  let closes = 0;
  const waiting: { count: number; resolve: () => void }[] = [];
  server.on('request', (_req, res) =>
    res.on('close', () => {
      closes++;
      for (const waiter of waiting.filter((w) => closes >= w.count)) waiter.resolve();
    }),
  );
  const closed = (count: number) => new Promise<void>((resolve) => (closes >= count ? resolve() : waiting.push({ count, resolve })));
  try {
    await work(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, lines, closed);
  } finally {
    server.closeAllConnections();
    server.close();
  }
}


describe('the request log', () => {
  it('logs 5xx at error, 4xx at info and successes at debug, once each, with the request and the answer', async () => {
    await withApp('debug', async (base, lines, closed) => {
      for (const code of [200, 404, 503]) await fetch(`${base}/status/${code}?q=1`);
      await closed(3);
      expect(lines.map((line) => [line.level, line.res.statusCode, line.msg])).toEqual([
        [20, 200, 'request completed'],
        [30, 404, 'request completed'],
        [50, 503, 'request errored'],
      ]);
      const [first] = lines;
      expect(first!.req).toMatchObject({ method: 'GET', url: '/status/200?q=1', query: { q: '1' }, remoteAddress: '127.0.0.1' });
      expect(first!.res.headers['content-type']).toMatch(/application\/json/);
      expect(first!.responseTime).toBeGreaterThanOrEqual(0);
      expect(lines[2]!.err.message).toBe('failed with status code 503');
      expect(new Set(lines.map((line) => line.req.id)).size).toBe(3);
    });
  });

  it('never logs credentials, only that they were sent', async () => {
    await withApp('debug', async (base, lines, closed) => {
      const secrets = { authorization: 'Bearer gcp_tok_secret', 'x-service-operator-key': 'operator-secret', cookie: 'session=secret' };
      await fetch(`${base}/status/401`, { headers: { ...secrets, 'x-other': 'visible' } });
      await closed(1);
      expect(lines).toHaveLength(1);
      expect(JSON.stringify(lines)).not.toMatch(/secret/);
      expect(lines[0]!.req.headers).toMatchObject({ authorization: '[Redacted]', 'x-service-operator-key': '[Redacted]', cookie: '[Redacted]', 'x-other': 'visible' });
    });
  });

  it('writes only the levels enabled', async () => {
    await withApp('info', async (base, lines, closed) => {
      for (const code of [200, 204, 422, 500]) await fetch(`${base}/status/${code}`);
      await closed(4);
      expect(lines.map((line) => line.res.statusCode)).toEqual([422, 500]);
    });
    await withApp('silent', async (base, lines, closed) => {
      for (const code of [200, 422, 500]) await fetch(`${base}/status/${code}`);
      await closed(3);
      expect(lines).toEqual([]);
    });
  });
});
