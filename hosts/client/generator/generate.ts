/**
 * Writes hosts/client/schema.d.ts from the server's OpenAPI document, or (--check) says whether the committed
 * one is stale. The document is built in process from the route table, exactly as /openapi.json serves it, on
 * an in-memory embedded database: no server, no network.
 *
 * openapi-typescript needs TypeScript 5's JS API, which the project's native TypeScript 7 lacks, so it lives in
 * this folder's own package, installed here on demand (`npm ci --prefix`, with the npm that runs this script).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withOfflinePlane } from '../../docs/offline-plane.ts';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../../..');
const target = resolve(here, '../schema.d.ts');

/** Installs the generator's package when its node_modules are missing or do not match its lockfile. */
function ensureGenerator(): string {
  const lock = JSON.parse(readFileSync(join(here, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> };
  const wanted = Object.entries(lock.packages).filter(([path]) => path.startsWith('node_modules/'));
  const installed = wanted.every(([path, { version }]) => {
    const manifest = join(here, path, 'package.json');
    return existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version === version;
  });
  if (!installed) {
    // npm_execpath is set by `npm run`; running it with this process's Node is what the npm24 script does
    const npm = process.env.npm_execpath;
    const [command, args] = npm ? [process.execPath, [npm]] : ['npm', []];
    const result = spawnSync(command, [...args, 'ci', '--prefix', here, '--no-audit', '--no-fund', '--loglevel=error'], { stdio: ['ignore', 'inherit', 'inherit'] });
    if (result.status !== 0) throw new Error(`npm ci --prefix ${relative(root, here)} failed (${result.status ?? result.signal})`);
  }
  return join(here, 'node_modules/openapi-typescript/bin/cli.js');
}

const openApiDocument = (): Promise<object> => withOfflinePlane((plane) => plane.openApi);

async function main(): Promise<void> {
  const check = process.argv.includes('--check');
  const cli = ensureGenerator();
  const work = mkdtempSync(join(tmpdir(), 'gpuctl-client-'));
  try {
    const documentPath = join(work, 'openapi.json');
    writeFileSync(documentPath, JSON.stringify(await openApiDocument()));
    const output = check ? join(work, 'schema.d.ts') : target;
    // a field with a default is optional to send: the default non-nullable setting would make request bodies' defaults required
    const result = spawnSync(process.execPath, [cli, documentPath, '--output', output, '--default-non-nullable=false'], { stdio: ['ignore', 'inherit', 'inherit'] });
    if (result.status !== 0) throw new Error(`openapi-typescript failed (${result.status ?? result.signal})`);
    if (!check) {
      console.log(`wrote ${relative(root, target)}`);
      return;
    }
    const committed = existsSync(target) ? readFileSync(target, 'utf8') : '';
    if (committed !== readFileSync(output, 'utf8')) {
      const diff = spawnSync('diff', ['-u', target, output], { encoding: 'utf8' });
      process.stderr.write(diff.stdout.split('\n').slice(0, 80).join('\n') + '\n');
      console.error(`${relative(root, target)} is stale: the API changed. Run \`npm run client:generate\` and commit it.`);
      process.exitCode = 1;
      return;
    }
    console.log(`${relative(root, target)} is up to date`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
