import express, { type Request, type Response } from 'express';
import { BODY_LIMIT_KB, HttpProblem } from './json-body.ts';

const FORM_TYPE = 'application/x-www-form-urlencoded';

const parseForm = express.urlencoded({ extended: false, limit: `${BODY_LIMIT_KB}kb`, type: FORM_TYPE });

const sendsBody = (req: Request): boolean => req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

/**
 * Reads an HTML form's body (application/x-www-form-urlencoded), for the pages a browser posts to; the JSON
 * routes never take one. No body reads as an empty form; another type is refused (415); a field sent twice
 * is left out, so the page asks for it again.
 */
export async function readFormBody(req: Request, res: Response): Promise<Record<string, string>> {
  if (!sendsBody(req)) return {};
  if (!req.is(FORM_TYPE)) {
    const sent = req.get('content-type');
    throw new HttpProblem(415, `the body must be a form, sent with Content-Type: ${FORM_TYPE} (got ${sent ? `"${sent}"` : 'no Content-Type'})`);
  }
  await new Promise<void>((resolve, reject) => parseForm(req, res, (error?: unknown) => (error ? reject(error) : resolve())));
  const form: Record<string, string> = {};
  for (const [name, value] of Object.entries((req.body ?? {}) as Record<string, unknown>)) {
    if (typeof value === 'string') form[name] = value;
  }
  return form;
}
