import type { Command } from 'commander';
import { serveStdio } from '../../mcp/stdio-server.ts';
import { connect, example } from '../context.ts';
import { CliError, EXIT } from '../exit-codes.ts';

/**
 * `gpuctl mcp`: the API's tools for an MCP client (a desktop agent, an IDE) over stdio, signed in as gpuctl
 * is (the profile, or GPUCTL_URL and GPUCTL_TOKEN): the client starts `npx gpuctl mcp` and needs no URL or
 * token of its own. Give it a profile signed in with a capped token (`gpuctl login --token`), not a session.
 */
export function registerMcp(program: Command): void {
  example(
    program
      .command('mcp')
      .description("serve the API's tools to an MCP client over stdio (stdout is MCP alone), signed in as this profile")
      .action(async (_options: object, command: Command) => {
        const session = connect(command);
        try {
          await serveStdio(session.client);
        } catch (error) {
          throw new CliError(`mcp: ${(error as Error).message}`, EXIT.unavailable);
        }
      }),
    'gpuctl --profile agent mcp      # in an MCP client: {"command": "npx", "args": ["gpuctl", "--profile", "agent", "mcp"]}',
  );
}
