import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

export const SERVER_MAIN = resolve(import.meta.dirname, '../../hosts/http/main.ts');
export const SWEEP_MAIN = resolve(import.meta.dirname, '../../hosts/sweep/main.ts');

export interface Spawned {
  child: ChildProcess;
  /** Started in a process group of its own (spawnCommand's `group`). */
  group: boolean;
  /** Every line it wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code (null after a signal). */
  exited: Promise<number | null>;
  /** Waits for a JSON log line matching `match`, at most `ms`. */
  line(match: (entry: Record<string, unknown>) => boolean, ms?: number): Promise<Record<string, unknown>>;
}

/** One of our entry points as its own process (what `npm start` or `npm run sweep` runs). */
export function spawnEntry(main: string, env: Record<string, string>, args: string[] = []): Spawned {
  return spawnCommand(process.execPath, [main, ...args], env);
}

/**
 * Any command as its own process; with `group`, in a process group of its own that `stop` ends whole (`npm start`
 * runs the server as a grandchild).
 */
export function spawnCommand(command: string, args: string[], env: Record<string, string>, options: { cwd?: string; group?: boolean } = {}): Spawned {
  const child = spawn(command, args, { cwd: options.cwd, detached: options.group ?? false, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  const waiters: { match: (entry: Record<string, unknown>) => boolean; resolve: (entry: Record<string, unknown>) => void }[] = [];
  const seen: Record<string, unknown>[] = [];
  let partial = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    text += chunk.toString();
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue;
      }
      seen.push(entry);
      for (const waiter of waiters.splice(0)) {
        if (waiter.match(entry)) waiter.resolve(entry);
        else waiters.push(waiter);
      }
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  return {
    child,
    group: options.group ?? false,
    output: () => text,
    exited,
    line(match, ms = 30_000) {
      const found = seen.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolveLine, reject) => {
        const timer = setTimeout(() => reject(new Error(`no such line within ${ms} ms; output:\n${text.slice(-3000)}`)), ms);
        exited.then((code) => reject(new Error(`exited (${code}) before such a line; output:\n${text.slice(-3000)}`)));
        waiters.push({ match, resolve: (entry) => (clearTimeout(timer), resolveLine(entry)) });
      });
    },
  };
}

/** A server process's base URL, once it logged the port it listens on. */
export async function listening(server: Spawned, ms = 30_000): Promise<string> {
  const entry = await server.line((e) => typeof e.port === 'number' && String(e.msg).includes('listening'), ms);
  return `http://127.0.0.1:${entry.port as number}`;
}

export async function stop(process: Spawned, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (process.child.exitCode === null && process.child.signalCode === null) {
    if (process.group) globalThis.process.kill(-process.child.pid!, signal);
    else process.child.kill(signal);
  }
  return process.exited;
}
