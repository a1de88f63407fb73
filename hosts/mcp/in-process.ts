import type { Request, Response } from 'express';
import { DomainError } from '../../core/errors.ts';
import type { Token } from '../../core/tenancy/token.ts';
import { requireAccess, type AuthorityReader } from '../http/access-check.ts';
import { toHttpError } from '../http/error-mapper.ts';
import type { HandlerResult, RouteDef } from '../http/route.ts';
import { parsePart } from '../http/validation.ts';
import type { ApiCall, ApiOutcome, ToolBackend } from './mcp-server.ts';
import type { ToolSpec } from './tool-catalog.ts';

/**
 * Handlers that look at the request read its headers only (Accept-Encoding): a tool call asks for no
 * content coding, so the answer comes as plain JSON.
 */
const NO_HEADERS = { headers: {}, get: () => undefined } as unknown as Request;
const NO_RESPONSE = {} as Response;

/**
 * Answers parsed lately, by their text. A handler that answers from a cache (a search asked again) gives the
 * same text until its data changes: the parse is done once for all the calls that get it.
 */
const PARSED_KEPT = 64;
const PARSED_MAX_CHARS = 256 * 1024;
const parsed = new Map<string, unknown>();

function parseKept(text: string): unknown {
  let value = parsed.get(text);
  if (value === undefined) {
    value = JSON.parse(text);
    if (text.length <= PARSED_MAX_CHARS) {
      if (parsed.size >= PARSED_KEPT) parsed.delete(parsed.keys().next().value!);
      parsed.set(text, value);
    }
  }
  return value;
}

/**
 * Answers a handler keeps and gives again as the same chunks (a cached search: the same array until its data
 * or its tail changes), with their text and parsed JSON: a repeated call neither joins the bytes nor looks its
 * 15 kB text up by hashing it. Entries go with the arrays.
 */
const keptAnswers = new WeakMap<readonly Buffer[], { text: string; body: unknown }>();

/** The JSON of a handler's answer, whichever form it took, with its text when the handler wrote one. */
function outcomeOf(result: HandlerResult): ApiOutcome {
  const raw = result.raw;
  if (!raw) return { status: result.status, body: result.body };
  let text: string;
  if ('text' in raw) text = raw.text;
  else {
    if (raw.coding !== 'identity') throw new Error(`a handler answered ${raw.coding} to a call that asked for no coding`);
    // an answer with `sent` is in a buffer lent for this request: read now, never kept
    const kept = raw.sent ? undefined : keptAnswers.get(raw.chunks);
    if (kept) return { status: result.status, ...kept };
    try {
      text = raw.chunks.length === 1 ? raw.chunks[0]!.toString() : Buffer.concat(raw.chunks).toString();
    } finally {
      raw.sent?.();
    }
    if (!raw.sent) {
      const answer = { text, body: parseKept(text) };
      keptAnswers.set(raw.chunks, answer);
      return { status: result.status, ...answer };
    }
  }
  // shared between calls: what the SDK is given it only reads (it writes it out)
  return { status: result.status, body: parseKept(text), text };
}

/**
 * Tool calls dispatched to the route table's own handlers for one authenticated token: the same scope and authority
 * checks (`authority` reads the chain above the token when a route needs manage over the whole tenant), the same validation of each part (parsePart) and the same use cases as the REST request would meet, with
 * no HTTP in between. Expected outcomes come back as the status and `{detail}` the REST API answers.
 */
export function inProcessBackend(routes: ReadonlyMap<string, RouteDef>, caller: Token, authority: AuthorityReader): ToolBackend {
  return {
    scopes: async () => caller.scopes,
    async invoke(tool: ToolSpec, call: ApiCall): Promise<ApiOutcome> {
      const route = routes.get(tool.operationId);
      if (!route) throw new Error(`no route for ${tool.operationId}`);
      try {
        const access = route.access;
        if (access.kind === 'bearer' || access.kind === 'bearer-or-body') await requireAccess(access, caller, 'tool', authority);
        const params = route.params ? parsePart(route.params, call.params, 'path') : {};
        const query = route.query ? parsePart(route.query, call.query, 'query') : {};
        const body = route.body ? parsePart(route.body, call.body ?? {}, 'body') : undefined;
        return outcomeOf(await route.handle({ params, query, body, caller, req: NO_HEADERS, res: NO_RESPONSE }));
      } catch (error) {
        if (!(error instanceof DomainError)) throw error;
        const { status, body } = toHttpError(error);
        return { status, body };
      }
    },
  };
}
