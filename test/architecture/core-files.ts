import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** The project's root and its core, for the architecture tests. */
export const ROOT = resolve(import.meta.dirname, '../..');
export const CORE = join(ROOT, 'core');

export const filesUnder = (dir: string, extensions: readonly string[] = ['.ts']): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path, extensions) : extensions.some((ext) => path.endsWith(ext)) ? [path] : [];
  });

/** Every module a source names: static imports and re-exports (types included), dynamic imports, bare imports. */
export const importsOf = (source: string): string[] =>
  [...source.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g)].map(
    (m) => (m[1] ?? m[2] ?? m[3])!,
  );

/** The source files of the whole tree (core, adapters, hosts with the console's .tsx) with their sources. */
export const treeSources = (): { path: string; source: string }[] =>
  ['core', 'adapters', 'hosts'].flatMap((dir) => filesUnder(join(ROOT, dir), ['.ts', '.tsx'])).map((path) => ({ path, source: readFileSync(path, 'utf8') }));

/** The files of core with their sources. */
export const coreSources = (): { path: string; source: string }[] => filesUnder(CORE).map((path) => ({ path, source: readFileSync(path, 'utf8') }));

/** The files a file imports by a relative path, as absolute paths. */
export const relativeImports = (path: string, source: string): string[] =>
  importsOf(source)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => resolve(dirname(path), spec));
