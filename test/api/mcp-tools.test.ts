import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { startApi, type TestApi } from '../support/api.ts';
import { buildOpenApi } from '../../hosts/http/openapi.ts';
import { defineRoute } from '../../hosts/http/route.ts';
import { toolCatalog, type OpenApiDocument } from '../../hosts/mcp/tool-catalog.ts';

let api: TestApi;
let client: Client;
let token: string;
let doc: any;
let tools: Map<string, Tool>;
beforeAll(async () => {
  api = await startApi();
  ({ token } = await api.newTenant());
  client = new Client({ name: 'mcp-tools-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${api.baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  doc = (await api.call('GET', '/openapi.json')).body;
  tools = new Map((await client.listTools()).tools.map((tool) => [tool.name, tool]));
});
afterAll(async () => {
  await client.close();
  await api.close();
});

/** Every `$ref` replaced by what it names, so two documents that lay out their references differently compare by meaning. */
function deref(schema: unknown, lookup: (ref: string) => unknown, depth = 0): unknown {
  if (depth > 20) return '(recursive)';
  if (Array.isArray(schema)) return schema.map((item) => deref(item, lookup, depth));
  if (schema === null || typeof schema !== 'object') return schema;
  const { $ref, ...rest } = schema as Record<string, unknown>;
  const base = typeof $ref === 'string' ? (deref(lookup($ref), lookup, depth + 1) as Record<string, unknown>) : {};
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(rest)) if (key !== '$defs') out[key] = deref(value, lookup, depth);
  return out;
}
const fromDoc = (ref: string) => doc.components.schemas[ref.replace('#/components/schemas/', '')];
const withoutDescription = (schema: any) => {
  const { description: _, ...rest } = schema;
  return rest;
};

/** The REST operations a tenant's token may call: bearer ones, but signing in (an agent has its token already). */
const tenantOperations = () =>
  Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([, op]) => op.security.some((s: object) => 'bearerAuth' in s) && !op.tags.includes('sign-in'))
      .map(([method, op]) => ({ path, method, op })),
  );

const snake = (id: string) => id.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

describe('one source: the REST API and the MCP tools', () => {
  it('every REST operation a tenant can call is a tool with the same input schema', () => {
    const operations = tenantOperations();
    expect(operations.length).toBeGreaterThan(40);
    for (const { path, method, op } of operations) {
      const tool = tools.get(snake(op.operationId));
      expect(tool, `${method.toUpperCase()} ${path} (${op.operationId}) is no tool`).toBeDefined();
      const lookup = (ref: string) => (ref.startsWith('#/$defs/') ? (tool!.inputSchema as any).$defs[ref.slice(8)] : fromDoc(ref));
      const properties = tool!.inputSchema.properties as Record<string, unknown>;
      const expected = new Map<string, unknown>();
      const required: string[] = [];
      for (const param of op.parameters ?? []) {
        expected.set(param.name, param.schema);
        if (param.required) required.push(param.name);
      }
      const bodyRef = op.requestBody?.content['application/json'].schema;
      if (bodyRef) {
        const body = deref(bodyRef, fromDoc) as any;
        for (const [field, schema] of Object.entries(body.properties)) expected.set(field, schema);
        if (op.requestBody.required) required.push(...(body.required ?? []));
      }
      // the bearer is the credential over MCP: create_token drops the bootstrap pair
      if (op.operationId === 'createToken') for (const field of ['tenant_id', 'bootstrap_secret']) expected.delete(field);
      expect(Object.keys(properties).sort(), op.operationId).toEqual([...expected.keys()].sort());
      for (const [name, schema] of expected) {
        expect(withoutDescription(deref(properties[name], lookup)), `${op.operationId}.${name}`).toEqual(withoutDescription(deref(schema, fromDoc)));
      }
      // rent_instance asks agents for the key the REST API leaves optional (retries are what agents do)
      const extra = op.operationId === 'rentInstance' ? ['idempotency_key'] : [];
      expect([...(tool!.inputSchema.required ?? [])].sort(), op.operationId).toEqual([...new Set([...required, ...extra])].sort());
    }
    // and nothing else is a tool
    expect(tools.size).toBe(operations.length);
  });

  it('a tool refuses what its REST operation refuses, with the same detail', async () => {
    for (const { path, method, op } of tenantOperations()) {
      const names = (op.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => p.name);
      if (names.length === 0) continue;
      const args = Object.fromEntries(names.map((name: string) => [name, 'nope']));
      const rest = await api.call(method.toUpperCase(), path.replace(/\{(\w+)\}/g, 'nope'), { token, ...(op.requestBody && { body: {} }) });
      const result = (await client.callTool({ name: snake(op.operationId), arguments: args })) as CallToolResult;
      expect(rest.status, op.operationId).toBeGreaterThanOrEqual(400);
      expect(result.isError, op.operationId).toBe(true);
      expect((result.content[0] as { text: string }).text, op.operationId).toBe(rest.body.detail);
    }
  });

  it('an operation added to the route table is a tool, named after its operationId', () => {
    const route = defineRoute({
      method: 'post',
      path: '/v1/widgets/{widget_id}/polish',
      operationId: 'polishWidget',
      summary: 'Polish a widget',
      tags: ['widgets'],
      access: { kind: 'bearer', scope: 'manage' },
      params: z.object({ widget_id: z.string() }),
      body: z.object({ shine: z.int().min(1) }),
      responses: [{ status: 200, description: 'Polished', schema: z.object({ id: z.string() }) }],
      handle: async () => ({ status: 200, body: { id: 'w' } }),
    });
    const [tool] = toolCatalog(buildOpenApi([route]) as OpenApiDocument);
    expect(tool).toMatchObject({
      name: 'polish_widget',
      scope: 'manage',
      inputSchema: { type: 'object', properties: { widget_id: { type: 'string' }, shine: { type: 'integer', minimum: 1 } }, required: ['widget_id', 'shine'] },
      outputSchema: { type: 'object', properties: { id: { type: 'string' } } },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    });
  });
});
