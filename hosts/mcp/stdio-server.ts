import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { ApiClient } from '../client/api-client.ts';
import { createMcpServer, toolSet } from './mcp-server.ts';
import { remoteBackend, remoteDocument } from './remote-backend.ts';
import { toolCatalog } from './tool-catalog.ts';

/**
 * The tools of POST /mcp over stdio, against the remote server `client` talks to, with its token: the tools
 * made from that server's own /openapi.json. stdout carries MCP alone: everything else goes to stderr.
 * Resolves once the client (the agent) closes the connection.
 */
export async function serveStdio(client: ApiClient): Promise<void> {
  const tools = toolSet(toolCatalog(await remoteDocument(client)));
  const server = createMcpServer(tools, remoteBackend(client), {
    onError: (error, tool) => process.stderr.write(`${tool} failed: ${error instanceof Error ? error.message : String(error)}\n`),
  });
  const closed = new Promise<void>((done) => (server.onclose = done));
  await server.connect(new StdioServerTransport());
  await closed;
}
