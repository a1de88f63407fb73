import type { Command } from 'commander';
import { createApiClient, type ApiClient } from '../client/api-client.ts';
import { CliError, EXIT, exitCodeOf } from './exit-codes.ts';
import { resolveConnection, type Connection } from './profiles.ts';

export interface GlobalOptions {
  profile?: string;
  json?: boolean;
}

export const optionsOf = <T extends object = Record<string, never>>(command: Command): GlobalOptions & T => command.optsWithGlobals<GlobalOptions & T>();

export const USER_AGENT = 'gpuctl';

export interface Session {
  client: ApiClient;
  connection: Connection;
}

/** The client for the command's profile or environment; `signedIn` refuses early (exit 3) when there is no token. */
export function connect(command: Command, { signedIn = true }: { signedIn?: boolean } = {}): Session {
  const connection = resolveConnection(optionsOf(command));
  if (signedIn && !connection.token) {
    throw new CliError(`not signed in to ${connection.url}: run \`gpuctl login\` (or set GPUCTL_TOKEN)`, EXIT.unauthorized);
  }
  return { connection, client: createApiClient({ baseUrl: connection.url, token: connection.token, headers: { 'user-agent': USER_AGENT } }) };
}

interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The API's `{detail}` (and, for a 422, each field to fix) as one message. */
export function detailOf(status: number, error: unknown): string {
  const body = (error ?? {}) as { detail?: unknown; code?: unknown; errors?: { loc?: unknown[]; msg?: unknown }[] };
  // a code the API names (PRICE_CHANGED) leads, for a script that reads it
  const detail = `${typeof body.code === 'string' ? `${body.code}: ` : ''}${typeof body.detail === 'string' ? body.detail : `HTTP ${status}`}`;
  // the detail of a 422 usually names its fields already; a field it leaves out is added below it
  const fieldErrors = (Array.isArray(body.errors) ? body.errors : []).map((e) => `${(e.loc ?? []).join('.')}: ${String(e.msg)}`).filter((line) => !detail.includes(line)).map((line) => `  ${line}`);
  return [detail, ...fieldErrors].join('\n');
}

/**
 * The answer's data, or a CliError with the API's detail and the exit code of its status. A server that
 * cannot be reached is "unavailable" (7), like a 503: retrying later is what helps.
 */
export async function expectOk<T>(session: Session, pending: Promise<Answer<T>>): Promise<T> {
  let answer: Answer<T>;
  try {
    answer = await pending;
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new CliError(`cannot reach ${session.connection.url}: ${cause?.code ?? cause?.message ?? (error as Error).message}`, EXIT.unavailable);
  }
  const { response } = answer;
  if (!response.ok) {
    const retry = response.headers.get('retry-after');
    const hint = response.status === 429 && retry ? ` (retry in ${retry} s)` : '';
    throw new CliError(`${detailOf(response.status, answer.error)}${hint}`, exitCodeOf(response.status));
  }
  return answer.data as T;
}

/** --json: the API's own JSON, unchanged. */
export const printJson = (data: unknown): void => {
  process.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
};

export const print = (text: string): void => {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
};

/** Progress and hints: stderr, so stdout stays the result. */
export const note = (text: string): void => {
  process.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
};

/** Adds the `Example:` block every command's --help ends with. */
export function example(command: Command, ...lines: string[]): Command {
  return command.addHelpText('after', `\nExample:\n${lines.map((line) => `  $ ${line}`).join('\n')}\n`);
}

/** --json on a command that prints something. */
export const withJson = (command: Command): Command => command.option('--json', "print the API's JSON answer as is (for scripts)");
