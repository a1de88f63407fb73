import { CommanderError } from 'commander';
import { CliError, EXIT } from './exit-codes.ts';
import { buildProgram } from './program.ts';

/** Commander's own outcomes: help and version are successes, everything else it reports is a usage error. */
const SUCCESS = new Set(['commander.helpDisplayed', 'commander.version', 'commander.executeSubCommandAsync']);

async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // commander has already printed its message (or the help) to stderr, except for an argument parsed in an action
      if (SUCCESS.has(error.code)) return EXIT.ok;
      if (error.code === 'commander.invalidArgument' && !error.message.startsWith('error:')) process.stderr.write(`error: ${error.message}\n`);
      return EXIT.usage;
    }
    if (error instanceof CliError) {
      process.stderr.write(`error: ${error.message}\n`);
      return error.exitCode;
    }
    process.stderr.write(`gpuctl failed unexpectedly: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return EXIT.unexpected;
  }
}

// `gpuctl ls | head -1`: the reader left, which is not a failure of the command
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? EXIT.ok);
  throw error;
});

process.exitCode = await main(process.argv);
