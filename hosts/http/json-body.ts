import express, { type RequestHandler } from 'express';

/** Largest request body read; bigger ones are refused with 413 before they are read. */
export const BODY_LIMIT_KB = 100;

/** A client error raised by the HTTP layer itself, answered as `{detail}` with its status. */
export class HttpProblem extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = 'HttpProblem';
    this.status = status;
  }
}

const JSON_TYPES = ['application/json', '+json'];

const parseJson = express.json({
  limit: `${BODY_LIMIT_KB}kb`,
  type: JSON_TYPES,
  // the raw bytes are kept for webhook signatures, which are computed over the body exactly as sent
  verify: (req, _res, buf) => ((req as { rawBody?: Buffer }).rawBody = buf),
});

const sendsBody = (headers: Record<string, string | string[] | undefined>): boolean =>
  headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0;

/**
 * Reads the JSON body of a route that takes one. A body in another type is refused (415) rather than read
 * as missing: a form post or a text/plain body is a client that needs to be told what to send.
 * No body at all leaves `req.body` undefined, for the route to treat as empty or missing.
 */
export const readJsonBody: RequestHandler = (req, res, next) => {
  if (!sendsBody(req.headers)) {
    next();
    return;
  }
  if (!req.is(JSON_TYPES)) {
    const sent = req.get('content-type');
    next(new HttpProblem(415, `the body must be JSON, sent with Content-Type: application/json (got ${sent ? `"${sent}"` : 'no Content-Type'})`));
    return;
  }
  parseJson(req, res, next);
};
