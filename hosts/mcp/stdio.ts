import { createApiClient } from '../client/api-client.ts';
import { serveStdio } from './stdio-server.ts';

/**
 * `npm run mcp`: the same tools as POST /mcp over stdio, against a remote server (GPUCTL_URL) with a token
 * (GPUCTL_TOKEN). `gpuctl mcp` does the same with gpuctl's signed-in profile.
 */
async function main(): Promise<void> {
  const url = process.env.GPUCTL_URL;
  const token = process.env.GPUCTL_TOKEN;
  if (!url || !token) {
    process.stderr.write('set GPUCTL_URL (the API, e.g. https://gpus.example.com) and GPUCTL_TOKEN (a token from POST /v1/tokens), or run `gpuctl mcp` once signed in\n');
    process.exit(2);
  }
  await serveStdio(createApiClient({ baseUrl: url, token, headers: { 'user-agent': 'gpu-control-plane-mcp-stdio' } }));
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
