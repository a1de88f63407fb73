#!/usr/bin/env node
// gpuctl's launcher. Plain JavaScript on purpose: it must start under whatever Node runs it, in a checkout
// and in an installed package, before it knows whether TypeScript can be run.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

if (Number(process.versions.node.split('.')[0]) < 24) {
  // A checkout brings Node 24 as a devDependency: `npx gpuctl` puts node_modules/.bin first on PATH, a shell
  // running bin/gpuctl.js by hand may not; then hand over to it.
  const local = join(root, 'node_modules', '.bin', process.platform === 'win32' ? 'node.cmd' : 'node');
  if (existsSync(local) && !process.env.GPUCTL_HANDED_OVER) {
    const result = spawnSync(local, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit', env: { ...process.env, GPUCTL_HANDED_OVER: '1' } });
    process.exit(result.status ?? 1);
  }
  console.error(`gpuctl needs Node.js 24 or later; this is ${process.version}`);
  process.exit(1);
}

// A checkout runs its TypeScript as is (Node 24 strips the types: no build step, never stale). Node refuses to
// strip types of files under node_modules, so an installed package runs its build (dist, made by prepack).
const source = join(root, 'hosts', 'cli', 'main.ts');
const installed = root.split(/[\\/]/).includes('node_modules');
await import(pathToFileURL(existsSync(source) && !installed ? source : join(root, 'dist', 'hosts', 'cli', 'main.js')).href);
