import type { Response } from 'express';
import type { RawBody } from './route.ts';

/** Sends a handler's final body, with its Content-Length; a HEAD answer gets the headers only. */
export function sendRaw(res: Response, raw: RawBody): void {
  res.type(raw.contentType);
  if ('text' in raw) {
    res.send(raw.text);
    return;
  }
  // the body depends on Accept-Encoding even when it is sent as is: shared caches must key on it
  res.vary('Accept-Encoding');
  if (raw.coding !== 'identity') res.set('Content-Encoding', raw.coding);
  let length = 0;
  for (const chunk of raw.chunks) length += chunk.length;
  res.set('Content-Length', String(length));
  if (res.req.method === 'HEAD') {
    res.end();
    return;
  }
  // corked: the headers and every chunk leave in one write, and end() uncorks
  res.cork();
  for (const chunk of raw.chunks) res.write(chunk);
  res.end();
}
