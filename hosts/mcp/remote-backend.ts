import type { ApiClient } from '../client/api-client.ts';
import type { ApiCall, ApiOutcome, ToolBackend } from './mcp-server.ts';
import type { ToolSpec } from './tool-catalog.ts';
import type { OpenApiDocument } from './tool-catalog.ts';

/** A call whose path and method are known at run time only: the typed client, untyped. */
type DynamicRequest = (
  method: string,
  url: string,
  init: { params: { path: Record<string, string>; query: Record<string, string> }; body?: unknown },
) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

/** The remote server's OpenAPI document, which its tools are made from: the tools of the server it talks to. */
export async function remoteDocument(client: ApiClient): Promise<OpenApiDocument> {
  const { data, response } = await (client.request as unknown as DynamicRequest)('get', '/openapi.json', { params: { path: {}, query: {} } });
  if (!response.ok || !data) throw new Error(`${response.url} answered ${response.status}: is GPUCTL_URL this API's address?`);
  return data as OpenApiDocument;
}

/**
 * Tool calls as HTTP requests to a remote server with the typed API client (stdio). The server checks the
 * token, its scopes and caps, and validates, as it does for any client: what comes back is its answer.
 */
export function remoteBackend(client: ApiClient): ToolBackend {
  const request = client.request as unknown as DynamicRequest;
  let scopes: Promise<readonly string[]> | undefined;
  return {
    // the token's scopes do not change; asked once, again only after a failure
    scopes() {
      scopes ??= request('get', '/v1/tokens/self', { params: { path: {}, query: {} } }).then(({ data, response }) => {
        if (!response.ok) {
          scopes = undefined;
          throw new Error(`GET /v1/tokens/self answered ${response.status}: is GPUCTL_TOKEN a valid token?`);
        }
        return (data as { scopes: string[] }).scopes;
      });
      return scopes;
    },
    async invoke(tool: ToolSpec, call: ApiCall): Promise<ApiOutcome> {
      const { data, error, response } = await request(tool.method, tool.path, {
        params: { path: call.params, query: call.query },
        ...(call.body !== undefined && { body: call.body }),
      });
      return { status: response.status, body: response.ok ? data : error };
    },
  };
}
