import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { toolNote } from './tool-notes.ts';

/** A JSON Schema object, as the OpenAPI document and MCP carry it. */
export type JsonSchema = Record<string, unknown>;

/** How a success answer becomes `structuredContent` (MCP wants an object). */
export type OutputShape = 'object' | 'list' | 'empty';

/** One MCP tool: an operation of the API, with where each of its arguments goes in the request. */
export interface ToolSpec {
  name: string;
  operationId: string;
  method: string;
  path: string;
  /** The token scope the operation needs; null: any token. */
  scope: string | null;
  description: string;
  inputSchema: JsonSchema & { type: 'object' };
  outputSchema: JsonSchema & { type: 'object' };
  annotations: ToolAnnotations;
  pathParams: readonly string[];
  queryParams: readonly string[];
  /** Fields of the JSON body; null when the operation reads no body. */
  bodyFields: readonly string[] | null;
  bodyRequired: boolean;
  output: OutputShape;
  /** Arguments an agent must send although the REST API lets them out (decision: retries are what agents do). */
  agentRequired: readonly string[];
}

interface Operation {
  operationId: string;
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  'x-required-scope'?: string | null;
  'x-requires-root'?: boolean;
  'x-requires-tenant-manage'?: boolean;
  parameters?: { name: string; in: string; required?: boolean; description?: string; schema?: JsonSchema }[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, { content?: Record<string, { schema?: JsonSchema }> }>;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

/** Tags of operations that are never tools: signing in makes a token, an agent already has one. */
const NOT_TOOLS = new Set(['sign-in', 'auth', 'operator']);

/** Body fields dropped from a tool: the bearer is the credential over MCP, the bootstrap pair never is. */
const DROPPED_FIELDS: Record<string, readonly string[]> = { create_token: ['tenant_id', 'bootstrap_secret'] };

/** rentInstance -> rent_instance; getTokenSelf -> get_token_self. */
export const toolName = (operationId: string): string => operationId.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();

const COMPONENT_REF = '#/components/schemas/';

/**
 * Tool schemas are self-contained: a `$ref` into the document's components becomes one into the tool's own
 * `$defs`, holding every component it reaches.
 */
function localise(schema: JsonSchema, components: Record<string, JsonSchema>): { schema: JsonSchema; defs: Record<string, JsonSchema> } {
  const defs: Record<string, JsonSchema> = {};
  const rewrite = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rewrite);
    if (value === null || typeof value !== 'object') return value;
    const out: JsonSchema = {};
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string' && inner.startsWith(COMPONENT_REF)) {
        const name = inner.slice(COMPONENT_REF.length);
        if (!(name in defs)) {
          defs[name] = {}; // placeholder first: a schema may reach itself
          defs[name] = rewrite(components[name] ?? {}) as JsonSchema;
        }
        out.$ref = `#/$defs/${name}`;
      } else out[key] = rewrite(inner);
    }
    return out;
  };
  return { schema: rewrite(schema) as JsonSchema, defs };
}

/** The schema itself when it is a reference to a component (MCP wants `type: object` at the top). */
const resolveTop = (schema: JsonSchema, components: Record<string, JsonSchema>): JsonSchema => {
  const ref = schema.$ref;
  return typeof ref === 'string' && ref.startsWith(COMPONENT_REF) ? resolveTop(components[ref.slice(COMPONENT_REF.length)] ?? {}, components) : schema;
};

const withDefs = <T extends JsonSchema>(schema: T, defs: Record<string, JsonSchema>): T => (Object.keys(defs).length > 0 ? { ...schema, $defs: defs } : schema);

function inputOf(name: string, op: Operation, components: Record<string, JsonSchema>, agentRequired: readonly string[]) {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const pathParams: string[] = [];
  const queryParams: string[] = [];
  let closed = true;
  for (const param of op.parameters ?? []) {
    if (param.in !== 'path' && param.in !== 'query') continue;
    (param.in === 'path' ? pathParams : queryParams).push(param.name);
    properties[param.name] = { ...param.schema, ...(param.description && { description: param.description }) };
    if (param.required) required.push(param.name);
  }
  let bodyFields: string[] | null = null;
  const bodySchema = op.requestBody?.content?.['application/json']?.schema;
  if (bodySchema) {
    const body = resolveTop(bodySchema, components);
    const dropped = DROPPED_FIELDS[name] ?? [];
    const fields = Object.entries((body.properties ?? {}) as Record<string, JsonSchema>).filter(([field]) => !dropped.includes(field));
    if (body.type !== 'object' || !body.properties) throw new Error(`${op.operationId}: its body is not an object with properties; a tool cannot spread it into arguments`);
    bodyFields = [];
    for (const [field, schema] of fields) {
      if (field in properties) throw new Error(`${op.operationId}: body field ${field} has the name of a parameter`);
      properties[field] = schema;
      bodyFields.push(field);
    }
    if (op.requestBody?.required) required.push(...((body.required ?? []) as string[]).filter((field) => !dropped.includes(field)));
    closed = body.additionalProperties === false;
  }
  for (const field of agentRequired) if (!required.includes(field)) required.push(field);
  const localised = localise({ type: 'object', properties, ...(required.length > 0 && { required }), ...(closed && { additionalProperties: false }) }, components);
  return {
    inputSchema: withDefs(localised.schema, localised.defs) as JsonSchema & { type: 'object' },
    pathParams,
    queryParams,
    bodyFields,
    bodyRequired: Boolean(op.requestBody?.required),
  };
}

function outputOf(op: Operation, components: Record<string, JsonSchema>): { outputSchema: JsonSchema & { type: 'object' }; output: OutputShape } {
  const successes = Object.entries(op.responses ?? {})
    .filter(([status]) => /^2\d\d$/.test(status))
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([, response]) => response.content?.['application/json']?.schema)
    .filter((schema): schema is JsonSchema => schema !== undefined);
  const [success] = successes;
  if (!success) return { output: 'empty', outputSchema: { type: 'object', properties: { ok: { type: 'boolean', const: true } }, required: ['ok'], additionalProperties: false } };
  const tops = successes.map((schema) => resolveTop(schema, components));
  if (tops.length > 1) {
    // answers of several shapes (a dry run's 200 beside a rental's 201): the structured content is any one of them
    if (tops.some((top) => top.type !== 'object')) throw new Error(`${op.operationId}: answers of several shapes must each be an object`);
    const { schema, defs } = localise({ type: 'object', anyOf: successes }, components);
    return { output: 'object', outputSchema: withDefs(schema, defs) as JsonSchema & { type: 'object' } };
  }
  const top = tops[0]!;
  if (top.type === 'array') {
    const { schema, defs } = localise({ type: 'object', properties: { items: top }, required: ['items'], additionalProperties: false }, components);
    return { output: 'list', outputSchema: withDefs(schema, defs) as JsonSchema & { type: 'object' } };
  }
  if (top.type !== 'object') throw new Error(`${op.operationId}: its answer is neither an object nor a list`);
  const { schema, defs } = localise(top, components);
  return { output: 'object', outputSchema: withDefs(schema, defs) as JsonSchema & { type: 'object' } };
}

const annotationsOf = (name: string, method: string): ToolAnnotations => {
  const note = toolNote(name);
  if (method === 'get') return { readOnlyHint: true, openWorldHint: false, ...note.hints };
  // a DELETE removes something; PUT and PATCH set what they are given, so sending them again changes nothing more
  const defaults: ToolAnnotations = {
    readOnlyHint: false,
    destructiveHint: method === 'delete',
    idempotentHint: method === 'delete' || method === 'put' || method === 'patch',
    openWorldHint: false,
  };
  return { ...defaults, ...note.hints };
};

/**
 * The tools of an API: every operation a bearer token may call, but signing in and the operator's, from the
 * OpenAPI document the route table makes (the HTTP endpoint reads its own, stdio the remote server's). An
 * operation added to the API is a tool with no change here.
 */
export function toolCatalog(doc: OpenApiDocument): ToolSpec[] {
  const components = doc.components?.schemas ?? {};
  const tools: ToolSpec[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      if (!op.security?.some((requirement) => 'bearerAuth' in requirement)) continue;
      if (op.tags?.some((tag) => NOT_TOOLS.has(tag))) continue;
      const name = toolName(op.operationId);
      const note = toolNote(name);
      const agentRequired = note.agentRequired ?? [];
      const scope = op['x-required-scope'] ?? null;
      const description = [
        `${op.summary ?? op.operationId}.`,
        note.text,
        scope ? `Needs the token's \`${scope}\` scope.` : null,
        op['x-requires-root'] ? 'Needs a root credential: an owner\'s or admin\'s session, or a token with every scope and no limit.' : null,
        op['x-requires-tenant-manage'] ? 'Refused to a member\'s session and every token under it: a member manages only its own tokens, SSH keys, images and templates.' : null,
        agentRequired.length > 0 ? `Required here: ${agentRequired.join(', ')}.` : null,
      ]
        .filter(Boolean)
        .join(' ');
      tools.push({
        name,
        operationId: op.operationId,
        method,
        path,
        scope,
        description,
        ...inputOf(name, op, components, agentRequired),
        ...outputOf(op, components),
        annotations: annotationsOf(name, method),
        agentRequired,
      });
    }
  }
  return tools;
}
