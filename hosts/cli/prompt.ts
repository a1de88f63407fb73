import { createInterface } from 'node:readline';
import { CliError, EXIT } from './exit-codes.ts';

/** A line typed on the terminal with echo off (a password); without a terminal, the first line of stdin. */
export async function secret(question: string): Promise<string> {
  const input = process.stdin;
  if (!input.isTTY) return firstLine();
  process.stderr.write(question);
  input.setRawMode(true);
  input.resume();
  input.setEncoding('utf8');
  return new Promise((resolve, reject) => {
    let typed = '';
    const done = (error: Error | null) => {
      input.setRawMode(false);
      input.pause();
      input.off('data', onData);
      process.stderr.write('\n');
      if (error) reject(error);
      else resolve(typed);
    };
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === '\r' || char === '\n') return done(null);
        if (char === '\u0003') return done(new CliError('cancelled', EXIT.unexpected));
        if (char === '\u007f' || char === '\b') typed = typed.slice(0, -1);
        else typed += char;
      }
    };
    input.on('data', onData);
  });
}

/** The first line of stdin (piped input). */
async function firstLine(): Promise<string> {
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    lines.close();
    return line;
  }
  throw new CliError('no password: type it on a terminal, pipe it on stdin, or pass --password', EXIT.usage);
}

/** y/yes on the terminal; without one there is nobody to ask, so the caller must pass --yes. */
export async function confirm(question: string, flag: string): Promise<boolean> {
  if (!process.stdin.isTTY) throw new CliError(`not a terminal, nobody to confirm: pass ${flag}`, EXIT.usage);
  const lines = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await new Promise<string>((resolve) => lines.question(`${question} [y/N] `, resolve));
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    lines.close();
  }
}
