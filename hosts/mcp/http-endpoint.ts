import type { Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { ErrorCode, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { DomainError } from '../../core/errors.ts';
import type { TenancyService } from '../../core/tenancy/tenancy-service.ts';
import type { Token } from '../../core/tenancy/token.ts';
import { loggableError } from '../http/error-log.ts';
import { readJsonBody } from '../http/json-body.ts';
import type { RateLimiters } from '../http/rate-limit.ts';
import type { RouteDef } from '../http/route.ts';
import { bearerOf } from '../http/router.ts';
import { inProcessBackend } from './in-process.ts';
import { toHttpError } from '../http/error-mapper.ts';
import { createMcpServer, toolSet } from './mcp-server.ts';
import { toolCatalog, type OpenApiDocument } from './tool-catalog.ts';

export const MCP_PATH = '/mcp';

export interface McpEndpointDeps {
  routes: readonly RouteDef[];
  openApi: object;
  tenancy: TenancyService;
  /** The REST routes' own limiters: a tool call spends the token's budget like a request does. */
  limiters: RateLimiters;
  logger: Logger;
}

const refuse = (res: Response, status: number, detail: string, challenge?: string): void => {
  if (challenge) res.set('WWW-Authenticate', challenge);
  res.status(status).json({ detail });
};

/**
 * JSON-RPC batches are refused, whatever they hold (docs/decisions.md, MCP batches): MCP has had none since
 * revision 2025-06-18, and the SDK's transport would run up to 100 messages of one for the single unit of the
 * token's budget the POST spent. The refusal is JSON-RPC's own (Invalid Request, id null), as the SDK answers a
 * message it cannot read.
 */
export const BATCH_REFUSAL = `Invalid Request: JSON-RPC batches are not accepted: MCP has no batching since protocol revision 2025-06-18 (this server speaks up to ${LATEST_PROTOCOL_VERSION}); send each message in a POST of its own`;

const refuseBatch = (res: Response): void => void res.status(400).json({ jsonrpc: '2.0', id: null, error: { code: ErrorCode.InvalidRequest, message: BATCH_REFUSAL } });

/**
 * The web Request the SDK's transport reads: the method, the URL and the headers it looks at (what the
 * client accepts, the body's type, the protocol version). The body is already parsed (express.json) and is
 * handed over beside it. Built directly rather than through the SDK's Node transport, which converts the
 * whole request (every header, the body stream) with @hono/node-server and the answer back again.
 */
const MCP_HEADERS = ['accept', 'content-type', 'mcp-protocol-version'] as const;

function webRequestOf(req: Request): globalThis.Request {
  const headers = new Headers();
  for (const name of MCP_HEADERS) {
    const value = req.headers[name];
    if (typeof value === 'string') headers.set(name, value);
  }
  const url = `http://${req.headers.host ?? 'localhost'}${MCP_PATH}`;
  // without a body the transport reads one and answers the JSON-RPC parse error, as for an empty POST
  if (req.body === undefined) return new globalThis.Request(url, { method: 'POST', headers, body: '' });
  // with one, what it reads is the method, the URL and the headers: a web Request's own construction
  // (signal, body state, URL parse) would be made for nothing
  return { method: 'POST', url, headers } as globalThis.Request;
}

/** The transport's answer written out: its status, headers and bytes (JSON, or nothing for a 202). */
async function send(res: Response, answer: globalThis.Response): Promise<void> {
  res.status(answer.status);
  answer.headers.forEach((value, name) => res.setHeader(name, value));
  if (answer.body === null) {
    res.end();
    return;
  }
  // read as the transport's chunks (its JSON is one) and written as they are: arrayBuffer() would copy them
  // into a new 32 kB ArrayBuffer per call, memory outside the heap that V8 counts toward its next collection
  const chunks: Buffer[] = [];
  let length = 0;
  const reader = answer.body.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    chunks.push(Buffer.from(read.value.buffer, read.value.byteOffset, read.value.byteLength));
    length += read.value.byteLength;
  }
  res.setHeader('Content-Length', length);
  res.end(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, length));
}

/**
 * POST /mcp: the API's tools over MCP's Streamable HTTP, stateless: each request gets a new server and
 * transport, answered as JSON (no session, no stream), so any replica answers any request. The bearer is the
 * caller's token, as on the REST routes: it decides the tenant, the tools listed (its scopes) and the caps.
 */
export function mcpEndpoint(deps: McpEndpointDeps): RequestHandler {
  const tools = toolSet(toolCatalog(deps.openApi as OpenApiDocument));
  const routes = new Map(deps.routes.map((route) => [route.operationId, route]));
  const onError = (error: unknown, tool: string) => deps.logger.error({ err: loggableError(error), tool }, 'mcp tool failed');

  /** The caller, or false once a 401 or 429 has been sent. Failed bearers are counted per address, as on REST. */
  async function admit(req: Request, res: Response): Promise<Token | false> {
    const bearer = bearerOf(req);
    let caller: Token | null = null;
    let refused: string | null = null;
    if (bearer === undefined) refused = 'missing Authorization header; send Authorization: Bearer <token>';
    else if (bearer === null) refused = 'malformed Authorization header; send Authorization: Bearer <token>';
    else {
      try {
        caller = await deps.tenancy.authenticate(bearer);
      } catch (error) {
        // only a refused bearer is a 401; anything else (the database not answering: 503) goes to the error mapper
        if (!(error instanceof DomainError) || toHttpError(error).status !== 401) throw error;
        refused = error.message;
      }
    }
    if (!(await (caller ? deps.limiters.byToken(caller.id, res) : deps.limiters.byAddress(req, res)))) return false;
    if (!caller) {
      refuse(res, 401, refused!, bearer ? 'Bearer error="invalid_token"' : 'Bearer');
      return false;
    }
    return caller;
  }

  const readBody = (req: Request, res: Response): Promise<void> =>
    new Promise((resolve, reject) => readJsonBody(req, res, (error?: unknown) => (error ? reject(error) : resolve())));

  async function serve(req: Request, res: Response): Promise<void> {
    const caller = await admit(req, res);
    if (!caller) return;
    await readBody(req, res);
    if (Array.isArray(req.body)) {
      refuseBatch(res);
      return;
    }
    const server = createMcpServer(tools, inProcessBackend(routes, caller, deps.tenancy), { onError });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    const answer = await transport.handleRequest(webRequestOf(req), { parsedBody: req.body });
    await send(res, answer);
    // not closed: answered as JSON, nothing of the server or transport outlives the answer (no stream, no timer,
    // no request of its own pending); close() would clear empty maps and build an McpError, stack and all, per call
  }

  return (req, res, next) => {
    // metrics label requests by route (request-log.ts): /mcp is one, whatever is called through it
    res.locals.route = MCP_PATH;
    if (req.method === 'OPTIONS') {
      res.set('Allow', 'POST').status(204).end();
      return;
    }
    if (req.method !== 'POST') {
      // stateless: no stream to open with GET, no session to end with DELETE
      res.set('Allow', 'POST');
      refuse(res, 405, `${req.method} is not allowed on ${MCP_PATH}: this MCP endpoint is stateless (no sessions, no server-sent stream); send JSON-RPC with POST`);
      return;
    }
    serve(req, res).catch(next);
  };
}
