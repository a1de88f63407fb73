import type { Response } from 'express';
import type { RawBody } from './route.ts';

/** Sends a handler's final body; express sets Content-Length from it and leaves it out of a HEAD answer. */
export function sendRaw(res: Response, raw: RawBody): void {
  res.type(raw.contentType);
  if ('text' in raw) {
    res.send(raw.text);
    return;
  }
  // the body depends on Accept-Encoding even when it is sent as is: shared caches must key on it
  res.vary('Accept-Encoding');
  if (raw.coding !== 'identity') res.set('Content-Encoding', raw.coding);
  res.send(raw.bytes);
}
