import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SystemClock } from '../../adapters/clock/system-clock.ts';
import type { Env, ProviderModule, ProviderRuntime } from '../../adapters/providers/provider-module.ts';
import { PROVIDER_MODULES } from '../../adapters/providers/registry.ts';
import { isSpotMarket, isVolumeHost } from '../../core/ports/providers.ts';

/**
 * A provider is a plugin (docs/adding-a-provider.md): its folder under adapters/providers/, its fake under
 * test/fakes/, its contract tests, and its line in adapters/providers/registry.ts. Nothing else in the product
 * names it: configuration rows, help texts, the SSH user and capability lists are read from the registry or from
 * the adapters. This file keeps it so.
 */
const ROOT = resolve(import.meta.dirname, '../..');

/** The product: what ships or runs as the server, the sweep, the CLI and the console. test/ and bench/ drive providers by name. */
const PRODUCT = ['core', 'adapters', 'hosts', 'bin', 'deploy', 'index.ts', 'package.json'];
const TEXT = /\.(ts|tsx|js|css|html|json|yaml)$|Dockerfile$/;

/**
 * Files that may name a provider besides its folder and the registry, each with why. Only the sandbox has entries:
 * it is the embedded default cloud, not only a plug-in. A new provider never needs a line here.
 */
const ALLOWED: readonly { path: string; names: readonly string[]; why: string }[] = [
  { path: 'hosts/client/schema.d.ts', names: ['sandbox', 'vast', 'runpod', 'lambda', 'verda', 'hyperstack', 'shadeform'], why: 'generated from the route table, whose provider filter lists the registry and whose examples use the sandbox' },
  { path: 'adapters/storage/migrations/', names: ['sandbox'], why: "the simulated cloud's tables; a migration is history, never edited" },
  { path: 'hosts/composition/modules/providers.ts', names: ['sandbox'], why: 'the default provider setting, and the simulated cloud found for the chaos routes' },
  { path: 'hosts/composition/modules/http.ts', names: ['sandbox'], why: 'the chaos routes, mounted only when the sandbox is on' },
  { path: 'hosts/composition/sandbox-chaos.ts', names: ['sandbox'], why: "the operator's chaos routes: faults injected into the simulated cloud" },
  { path: 'hosts/http/routes/sandbox-routes.ts', names: ['sandbox'], why: "the operator's chaos routes" },
  { path: 'hosts/docs/generate.ts', names: ['sandbox'], why: 'docs/configuration.md says the defaults run the sandbox' },
  // examples a fresh server (the sandbox alone) answers, as first-steps and test/api/openapi-examples.test.ts send them
  { path: 'hosts/http/schemas/instances.ts', names: ['sandbox'], why: 'an example node id' },
  { path: 'hosts/http/schemas/reservations.ts', names: ['sandbox'], why: 'an example node id' },
  { path: 'hosts/http/schemas/volumes.ts', names: ['sandbox'], why: 'an example volume provider' },
  { path: 'hosts/http/schemas/market.ts', names: ['sandbox'], why: 'an example provider filter' },
  { path: 'hosts/http/schemas/market-history.ts', names: ['sandbox'], why: 'an example provider filter' },
  { path: 'hosts/cli/commands/instances.ts', names: ['sandbox'], why: 'an example node id in the help' },
  { path: 'hosts/cli/commands/catalog.ts', names: ['sandbox'], why: 'an example volume provider in the help' },
  { path: 'adapters/identity/cognito/mapping.ts', names: ['lambda'], why: "AWS Lambda (Cognito's triggers), not the GPU cloud" },
];

const filesUnder = (path: string): string[] => {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path).flatMap((name) => (name === 'node_modules' || name === 'dist' ? [] : filesUnder(join(path, name))));
};

/**
 * Where `text` names the provider `name`: in any case (sandbox, Sandbox, SANDBOX), in code, strings, identifiers
 * (SandboxProvider, VAST_API_KEY, lambdaModule) and comments; not inside a longer word (sandboxed, vastly,
 * UserLambdaValidationException).
 */
export function mentions(text: string, name: string): number {
  const anyCase = [...name].map((c) => `[${c.toLowerCase()}${c.toUpperCase()}]`).join('');
  return [...text.matchAll(new RegExp(`(?<![A-Za-z])${anyCase}(?![a-z])`, 'g'))].length;
}

/** "path: name" for each product file naming a provider where it may not. */
function offenders(modules: readonly Pick<ProviderModule, 'name'>[]): string[] {
  const files = PRODUCT.filter((path) => existsSync(join(ROOT, path)))
    .flatMap((path) => filesUnder(join(ROOT, path)))
    .map((path) => relative(ROOT, path))
    .filter((path) => TEXT.test(path));
  return files.flatMap((path) => {
    if (path === 'adapters/providers/registry.ts') return [];
    const text = readFileSync(join(ROOT, path), 'utf8');
    return modules
      .filter(({ name }) => !path.startsWith(`adapters/providers/${name}/`))
      .filter(({ name }) => !ALLOWED.some((entry) => path.startsWith(entry.path) && entry.names.includes(name)))
      .filter(({ name }) => mentions(text, name) > 0)
      .map(({ name }) => `${path}: ${name}`);
  });
}

/** An environment that records what is read, answering "true" for the variables a module documents as its rows' names (a cloud may need two: an id and a secret). */
function recordingEnv(module: ProviderModule): { env: Env; read: Set<string> } {
  const enabling = new Set(module.configuration.flatMap((row) => row.names));
  const read = new Set<string>();
  const env = new Proxy({} as Env, {
    get: (_, key) => (typeof key === 'string' ? (read.add(key), enabling.has(key) ? 'true' : undefined) : undefined),
    has: (_, key) => (typeof key === 'string' && read.add(key), false),
  });
  return { env, read };
}

/** The variables a module's rows of docs/configuration.md name: each row's names and those in backquotes in its meaning. */
const documented = (module: ProviderModule): string[] =>
  module.configuration.flatMap((row) => [...row.names, ...[...row.meaning.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!)]);

/** What a module's create needs besides its configuration; no call reaches the database while an adapter is built. */
const runtime: ProviderRuntime = {
  clock: new SystemClock(),
  database: { execute: async () => Promise.reject(new Error('no database here')) },
  enabledProviders: [],
  providerNamed: (name) => name,
};

const built = (module: ProviderModule) => {
  const config = module.fromEnv(recordingEnv(module).env);
  expect(config, `${module.name}: enabled by its documented variables`).not.toBeNull();
  return module.create(config, runtime);
};

describe('a provider is a plugin', () => {
  it('no product file outside its folder names a provider, except its line in the registry and the allow-list', () => {
    expect(PROVIDER_MODULES.length).toBeGreaterThanOrEqual(4);
    expect(offenders(PROVIDER_MODULES)).toEqual([]);
  });

  it('the check finds names in code, strings, identifiers and comments, and no longer words', () => {
    expect(mentions("const user = provider === 'lambda' ? 'ubuntu' : 'root';", 'lambda')).toBe(1);
    expect(mentions('import { SandboxProvider } from "./x"; // the sandbox', 'sandbox')).toBe(2);
    expect(mentions('env.VAST_API_KEY ?? env.RUNPOD_API_KEY', 'vast')).toBe(1);
    expect(mentions('the RunPod fake; lambdaModule', 'runpod') + mentions('the RunPod fake; lambdaModule', 'lambda')).toBe(2);
    expect(mentions('sandboxed iframes, vastly, UserLambdaValidationException', 'sandbox') + mentions('vastly', 'vast') + mentions('UserLambdaValidationException', 'lambda')).toBe(0);
    // a name that no file mentions is found nowhere; one the product uses everywhere is found
    expect(offenders([{ name: 'nowhereprovider' }])).toEqual([]);
    expect(offenders([{ name: 'tenant' }]).length).toBeGreaterThan(10);
  });

  it('the allow-list holds nothing stale: each entry still names what it allows', () => {
    for (const entry of ALLOWED) {
      const text = filesUnder(join(ROOT, entry.path)).map((path) => readFileSync(path, 'utf8')).join('\n');
      for (const name of entry.names) expect(mentions(text, name), `${entry.path}: ${name}`).toBeGreaterThan(0);
    }
  });

  it('each registered provider has its folder, its contract tests and, for a real cloud, its fake', () => {
    const contracts = readdirSync(join(ROOT, 'test/contract/providers')).map((file) => readFileSync(join(ROOT, 'test/contract/providers', file), 'utf8')).join('\n');
    for (const module of PROVIDER_MODULES) {
      expect(module.name, 'a lower-case name: the prefix of its node ids').toMatch(/^[a-z][a-z0-9]*$/);
      expect(existsSync(join(ROOT, `adapters/providers/${module.name}/index.ts`)), `adapters/providers/${module.name}/index.ts`).toBe(true);
      expect(existsSync(join(ROOT, `test/contract/providers/${module.name}.test.ts`)), `test/contract/providers/${module.name}.test.ts`).toBe(true);
      if (module.real) expect(existsSync(join(ROOT, `test/fakes/${module.name}/server.ts`)), `test/fakes/${module.name}/server.ts`).toBe(true);
      const provider = built(module);
      expect(contracts).toContain(`providerContract('${module.name}'`);
      if (isVolumeHost(provider)) expect(contracts, `${module.name} hosts volumes`).toContain(`volumeHostContract('${module.name}'`);
      if (isSpotMarket(provider)) expect(contracts, `${module.name} is a spot market`).toContain(`spotMarketContract('${module.name}'`);
    }
    expect(new Set(PROVIDER_MODULES.map((m) => m.name)).size).toBe(PROVIDER_MODULES.length);
  });

  it('each module builds an adapter of its name, states its SSH user, and documents every variable it reads, no more', () => {
    for (const module of PROVIDER_MODULES) {
      expect(built(module).name).toBe(module.name);
      expect(module.sshUser, `${module.name}: a login name`).toMatch(/^[a-z_][a-z0-9_-]*$/);
      const { env, read } = recordingEnv(module);
      module.fromEnv(env);
      expect([...read].sort(), `${module.name}: what fromEnv reads is what its configuration rows name`).toEqual([...new Set(documented(module))].sort());
    }
  });
});
