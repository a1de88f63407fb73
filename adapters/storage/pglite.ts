import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Shared buffers of the embedded database. PostgreSQL's default, 128 MB, is touched at start inside PGlite's
 * WASM memory and stays resident (about 118 MB of the process's idle RSS); the control plane's embedded data
 * is a few MB, and pages evicted from these buffers are still in the operating system's file cache.
 */
const SHARED_BUFFERS = '16MB';

/** PGlite's start parameters: its own defaults, with smaller shared buffers. */
export async function pgliteStartParams(): Promise<string[]> {
  const { PGlite } = await import('@electric-sql/pglite');
  return [...PGlite.defaultStartParams, '-c', `shared_buffers=${SHARED_BUFFERS}`];
}

/**
 * Makes the cluster of a new data directory in a short-lived child process. PGlite runs initdb in a second WASM
 * instance with a 128 MB copy of its heap, and that memory stays with the process that ran it (about 160 MB
 * of idle RSS); a child returns it to the system when it exits. An existing cluster is left alone.
 */
export async function initPgliteDirectory(dataDir: string): Promise<void> {
  if (existsSync(join(dataDir, 'PG_VERSION'))) return;
  // the script beside this module: .ts when run from source, .js from dist/
  const script = fileURLToPath(new URL(`./pglite-init${extname(fileURLToPath(import.meta.url))}`, import.meta.url));
  const child = spawn(process.execPath, [script, dataDir], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((done, failed) => {
    child.once('error', failed);
    child.once('exit', done);
  });
  if (code !== 0) throw new Error(`could not create the embedded database in ${dataDir} (exit code ${code}): ${stderr.trim()}`);
}
