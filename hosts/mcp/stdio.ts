import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createApiClient } from '../client/api-client.ts';
import { createMcpServer, toolSet } from './mcp-server.ts';
import { remoteBackend, remoteDocument } from './remote-backend.ts';
import { toolCatalog } from './tool-catalog.ts';

/**
 * `npm run mcp`: the same tools as POST /mcp over stdio, for desktop agents, against a remote server
 * (GPUCTL_URL) with a token (GPUCTL_TOKEN). stdout carries MCP alone: everything else goes to stderr.
 */
async function main(): Promise<void> {
  const url = process.env.GPUCTL_URL;
  const token = process.env.GPUCTL_TOKEN;
  if (!url || !token) {
    process.stderr.write('set GPUCTL_URL (the API, e.g. https://gpus.example.com) and GPUCTL_TOKEN (a token from POST /v1/tokens)\n');
    process.exit(2);
  }
  const client = createApiClient({ baseUrl: url, token, headers: { 'user-agent': 'gpu-control-plane-mcp-stdio' } });
  const tools = toolSet(toolCatalog(await remoteDocument(client)));
  const server = createMcpServer(tools, remoteBackend(client), {
    onError: (error, tool) => process.stderr.write(`${tool} failed: ${error instanceof Error ? error.message : String(error)}\n`),
  });
  await server.connect(new StdioServerTransport());
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
