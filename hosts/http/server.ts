import { createServer, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Express } from 'express';

/** Node's limit on the request line and headers together; a longer URL never reaches Express. */
export const MAX_HEAD_BYTES = 16 * 1024;

const REASONS: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

const answered = new WeakSet<Duplex>();

/**
 * Node answers requests it cannot parse before Express sees them, with an empty body, and then destroys the
 * socket: a client still sending a long URL meets a reset before it reads the answer. Here they get
 * `{detail}` like every other error, and what they still send is read and dropped until they close.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (answered.has(socket)) return; // the parser reports every later chunk of the same request too
  answered.add(socket);
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, detail] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, `the URL and headers are over ${MAX_HEAD_BYTES / 1024} kB together; shorten the URL (fewer or shorter query parameters) or the headers`]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'the request took too long to arrive; send it again']
        : [400, `the request is not valid HTTP/1.1 (${error.code ?? 'parse error'})`];
  const body = JSON.stringify({ detail });
  socket.end(
    `HTTP/1.1 ${status} ${REASONS[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  socket.resume();
  setTimeout(() => socket.destroy(), 5_000).unref();
}

/**
 * How long an idle keep-alive connection stays open (docs/operations.md, "Running several replicas"): longer than
 * the idle timeout of the balancers in front (60 s at the common ones), so a balancer never sends a request on a
 * connection we close at that instant, a reset it answers with 502. At Node's default of 5 s a client reusing a
 * connection after a pause of about that long (a script that ran ssh-keygen) met the same race.
 */
export const KEEP_ALIVE_MS = 65_000;

/** The HTTP server for an app, as main.ts and the tests run it. */
export function listenHttp(app: Express, port: number, host: string): Server {
  const server = createServer({ maxHeaderSize: MAX_HEAD_BYTES, keepAliveTimeout: KEEP_ALIVE_MS }, app);
  server.on('clientError', answerClientError);
  return server.listen(port, host);
}
