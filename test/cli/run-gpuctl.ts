import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** The launcher a user's `npx gpuctl` runs (package.json bin). */
export const GPUCTL = resolve(import.meta.dirname, '../../bin/gpuctl.js');

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface Gpuctl {
  /** A config home of its own: profiles written here, never in the user's. */
  configHome: string;
  /** Runs `gpuctl args...` to its end; env adds to (or, with undefined, removes from) the process's own. */
  run(args: string[], options?: { env?: Record<string, string | undefined>; input?: string }): Promise<Run>;
  /** Starts it and hands back the process, for a test that acts while it runs (device flow, --wait). */
  start(args: string[], options?: { env?: Record<string, string | undefined> }): { child: ChildProcess; done: Promise<Run>; output: () => Run };
}

/** gpuctl as a separate process, on this Node (24), with no GPUCTL_* from the developer's shell. */
export function gpuctl(base: Record<string, string | undefined> = {}): Gpuctl {
  const configHome = mkdtempSync(join(tmpdir(), 'gpuctl-config-'));
  const environment = (extra: Record<string, string | undefined> = {}) => {
    const inherited = Object.entries(process.env).filter(([key]) => !key.startsWith('GPUCTL_'));
    const env: Record<string, string> = {};
    for (const [key, value] of [...inherited, ['XDG_CONFIG_HOME', configHome], ...Object.entries(base), ...Object.entries(extra)]) {
      if (value === undefined) delete env[key!];
      else env[key!] = value;
    }
    return env;
  };
  const start: Gpuctl['start'] = (args, options = {}) => {
    const child = spawn(process.execPath, [GPUCTL, ...args], { env: environment(options.env), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const done = new Promise<Run>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    return { child, done, output: () => ({ code: child.exitCode, stdout, stderr }) };
  };
  return {
    configHome,
    start,
    async run(args, options = {}) {
      const started = start(args, options);
      started.child.stdin!.end(options.input ?? '');
      return started.done;
    },
  };
}

/** Waits until `check` holds (polling), or fails saying what it waited for. */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
