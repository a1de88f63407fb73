import type { Response } from 'express';
import type { RawBody } from './route.ts';

/** What Express's `res.type('application/json')` sets, written once here rather than looked up per answer. */
const JSON_TYPE = 'application/json; charset=utf-8';

/** Sends a handler's final body, with its Content-Length; a HEAD answer gets the headers only. */
export function sendRaw(res: Response, raw: RawBody): void {
  if ('text' in raw) {
    res.type(raw.contentType);
    res.send(raw.text);
    return;
  }
  res.setHeader('Content-Type', JSON_TYPE);
  // the body depends on Accept-Encoding even when it is sent as is: shared caches must key on it
  if (res.getHeader('vary') === undefined) res.setHeader('Vary', 'Accept-Encoding');
  else res.vary('Accept-Encoding');
  if (raw.coding !== 'identity') res.setHeader('Content-Encoding', raw.coding);
  let length = 0;
  for (const chunk of raw.chunks) length += chunk.length;
  res.setHeader('Content-Length', String(length));
  if (res.req.method === 'HEAD') {
    res.end();
    raw.sent?.();
    return;
  }
  // 'finish' comes once the last chunk is with the operating system; an aborted answer never gives its
  // buffers back (a write still queued may hold them), the collector takes them
  if (raw.sent) res.once('finish', raw.sent);
  // corked: the headers and every chunk leave in one write, and end() uncorks
  res.cork();
  for (const chunk of raw.chunks) res.write(chunk);
  res.end();
}
