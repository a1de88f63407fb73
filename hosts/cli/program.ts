import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { registerAuth } from './commands/auth.ts';
import { registerBilling } from './commands/billing.ts';
import { registerBudget } from './commands/budget.ts';
import { registerCatalog } from './commands/catalog.ts';
import { registerInstances } from './commands/instances.ts';
import { registerMarket } from './commands/market.ts';
import { registerMcp } from './commands/mcp.ts';
import { registerPeople } from './commands/people.ts';
import { registerTenants } from './commands/tenants.ts';
import { registerTokens } from './commands/tokens.ts';

/** The package's version, from a checkout (hosts/cli) or a build (dist/hosts/cli). */
function version(): string {
  for (const path of ['../../package.json', '../../../package.json']) {
    try {
      const manifest = JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (manifest.name === 'gpu-control-plane' && manifest.version) return manifest.version;
    } catch {
      /* the next place */
    }
  }
  return 'unknown';
}

/** Every gpuctl command; parse errors throw (exitOverride) so main decides the exit code. */
export function buildProgram(): Command {
  const program = new Command('gpuctl')
    .description('Rent GPUs from every provider of a gpu-control-plane server, from a terminal or a script')
    .version(version())
    .option('--profile <name>', 'the saved profile to use (default: GPUCTL_PROFILE, or the last one signed in)')
    .exitOverride()
    .configureHelp({ showGlobalOptions: true })
    .showSuggestionAfterError()
    .addHelpText(
      'after',
      [
        '',
        'Signed in with `gpuctl login` (profiles in $XDG_CONFIG_HOME/gpuctl/config.json), or GPUCTL_URL and GPUCTL_TOKEN.',
        'Exit codes: 0 ok, 1 unexpected, 2 usage, 3 unauthenticated/forbidden, 4 not found, 5 payment required/cap,',
        '            6 conflict, 7 unavailable/rate limited, 8 invalid input.',
        '',
        'Example:',
        '  $ gpuctl gpus --gpu-type H100 --max-price 2.5',
      ].join('\n'),
    );
  registerAuth(program);
  registerMarket(program);
  registerInstances(program);
  registerBilling(program);
  registerBudget(program);
  registerTokens(program);
  registerPeople(program);
  registerTenants(program);
  registerCatalog(program);
  registerMcp(program);
  return program;
}
