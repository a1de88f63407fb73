import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { API_VERSION } from '../http/openapi.ts';
import type { ToolSpec } from './tool-catalog.ts';

/** A request to the API as a tool call makes it: path and query parameters as URL text, the JSON body. */
export interface ApiCall {
  params: Record<string, string>;
  query: Record<string, string>;
  /** undefined when the operation reads no body. */
  body: Record<string, unknown> | undefined;
}

/** What the API answered: a status and its JSON (undefined for 204); an error status carries `{detail}`. */
export interface ApiOutcome {
  status: number;
  body: unknown;
  /** The body's JSON text as the API wrote it, when the backend has it: the tool result's text is made of it. */
  text?: string;
}

/**
 * How the tools reach the API: in process through the route handlers (POST /mcp), or over HTTP to a remote
 * server (stdio). The same tools and results either way.
 */
export interface ToolBackend {
  /** The scopes of the caller's token: tools it may not call are not listed. */
  scopes(): Promise<readonly string[]>;
  invoke(tool: ToolSpec, call: ApiCall): Promise<ApiOutcome>;
}

/** Tool specs by name, and the MCP `Tool` objects listed for them, made once per catalog. */
export interface ToolSet {
  byName: ReadonlyMap<string, ToolSpec>;
  listed: ReadonlyMap<string, Tool>;
}

export function toolSet(specs: readonly ToolSpec[]): ToolSet {
  return {
    byName: new Map(specs.map((spec) => [spec.name, spec])),
    listed: new Map(
      specs.map((spec) => [
        spec.name,
        { name: spec.name, description: spec.description, inputSchema: spec.inputSchema, outputSchema: spec.outputSchema, annotations: spec.annotations } as Tool,
      ]),
    ),
  };
}

const errorResult = (detail: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text: detail }] });

/** A query parameter as a URL carries it: the API reads `8`, `true` and `2.5` from text. */
const queryText = (value: unknown): string => (typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value));

/**
 * A tool's arguments split into the request's parts. An argument the tool does not take is refused here
 * (the dropped bootstrap fields of create_token among them) rather than passed on.
 */
export function apiCallOf(tool: ToolSpec, args: Record<string, unknown>): ApiCall | string {
  const unknown = Object.keys(args).filter((name) => !tool.pathParams.includes(name) && !tool.queryParams.includes(name) && !tool.bodyFields?.includes(name));
  if (unknown.length > 0) return `unknown argument(s): ${unknown.join(', ')}; ${tool.name} takes ${Object.keys(tool.inputSchema.properties as object).join(', ') || 'none'}`;
  const missing = tool.agentRequired.filter((name) => args[name] === undefined || args[name] === null || args[name] === '');
  if (missing.length > 0) {
    return `${missing.join(', ')}: required for agents (retries are what agents do); send a fresh one per ${tool.name.replace(/^[a-z]+_/, '')}, and the same one when you retry`;
  }
  const call: ApiCall = { params: {}, query: {}, body: undefined };
  for (const name of tool.pathParams) if (args[name] !== undefined) call.params[name] = String(args[name]);
  for (const name of tool.queryParams) if (args[name] !== undefined && args[name] !== null) call.query[name] = queryText(args[name]);
  if (tool.bodyFields) {
    const body: Record<string, unknown> = {};
    for (const name of tool.bodyFields) if (name in args) body[name] = args[name];
    call.body = body;
  }
  return call;
}

/** The MCP result of an API answer: JSON as structuredContent (a list as `{items}`, a 204 as `{ok: true}`) and as text. */
export function resultOf(tool: ToolSpec, outcome: ApiOutcome): CallToolResult {
  if (outcome.status >= 400) {
    const { detail, code } = (outcome.body ?? {}) as { detail?: unknown; code?: unknown };
    // the code an API client branches on leads the text, where an agent reads it first
    return errorResult(`${typeof code === 'string' ? `${code}: ` : ''}${typeof detail === 'string' ? detail : `the API answered ${outcome.status}`}`);
  }
  if (tool.output === 'empty' || outcome.body === undefined) return { structuredContent: { ok: true }, content: [{ type: 'text', text: '{"ok":true}' }] };
  const structured = tool.output === 'list' ? { items: outcome.body } : (outcome.body as Record<string, unknown>);
  // the text is the API's own JSON when there is one: not written a second time
  const text = outcome.text === undefined ? JSON.stringify(structured) : tool.output === 'list' ? `{"items":${outcome.text}}` : outcome.text;
  return { structuredContent: structured, content: [{ type: 'text', text }] };
}

/** Resources for clients that read rather than call: each the answer of a read tool. */
const RESOURCES = [
  { uri: 'account://balance', name: 'balance', tool: 'get_balance', description: 'Balance, owed and available, in cents (get_balance)' },
  { uri: 'instances://', name: 'instances', tool: 'list_instances', description: "The tenant's instances, newest first (list_instances)" },
] as const;

export interface McpServerOptions {
  /** Called with an unexpected failure (a bug, an outage); the agent is told it was logged, nothing more. */
  onError(error: unknown, tool: string): void;
}

/**
 * One MCP server over a tool set and a backend: tools/list answers the tools the token's scopes allow,
 * tools/call runs one through the backend. A tool outside the token's scopes answers like the API would (its
 * detail names the scope) rather than "unknown tool": the agent learns which token it needs.
 */
/**
 * The server checks elicitation answers only, which it never asks for; left to itself, each Server makes a
 * validator of its own (a new Ajv: about half of a stateless request's CPU). One is shared.
 */
const VALIDATOR = new AjvJsonSchemaValidator();

export function createMcpServer(tools: ToolSet, backend: ToolBackend, options: McpServerOptions): Server {
  const server = new Server({ name: 'gpu-control-plane', version: API_VERSION }, { capabilities: { tools: {}, resources: {} }, jsonSchemaValidator: VALIDATOR });
  const allowed = (spec: { scope: string | null }, scopes: readonly string[]) => spec.scope === null || scopes.includes(spec.scope);

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const scopes = await backend.scopes();
    return { tools: [...tools.byName.values()].filter((spec) => allowed(spec, scopes)).map((spec) => tools.listed.get(spec.name)!) };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const spec = tools.byName.get(request.params.name);
    if (!spec) throw new McpError(ErrorCode.InvalidParams, `unknown tool ${request.params.name}; tools/list names them`);
    const call = apiCallOf(spec, request.params.arguments ?? {});
    if (typeof call === 'string') return errorResult(call);
    try {
      return resultOf(spec, await backend.invoke(spec, call));
    } catch (error) {
      options.onError(error, spec.name);
      return errorResult('internal error; it has been logged');
    }
  });

  server.setRequestHandler(ListResourcesRequestSchema, async () => {
    const scopes = await backend.scopes();
    return {
      resources: RESOURCES.filter((resource) => allowed(tools.byName.get(resource.tool) ?? { scope: '-' }, scopes)).map(({ uri, name, description }) => ({
        uri,
        name,
        description,
        mimeType: 'application/json',
      })),
    };
  });

  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const resource = RESOURCES.find((r) => r.uri === request.params.uri);
    const spec = resource && tools.byName.get(resource.tool);
    if (!resource || !spec) throw new McpError(ErrorCode.InvalidParams, `unknown resource ${request.params.uri}; resources/list names them`);
    const outcome = await backend.invoke(spec, { params: {}, query: {}, body: undefined });
    if (outcome.status >= 400) throw new McpError(ErrorCode.InvalidRequest, (outcome.body as { detail?: string })?.detail ?? `the API answered ${outcome.status}`);
    return { contents: [{ uri: resource.uri, mimeType: 'application/json', text: JSON.stringify(outcome.body) }] };
  });

  return server;
}
