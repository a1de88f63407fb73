import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const CORE = join(ROOT, 'core');

const filesUnder = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : path.endsWith('.ts') ? [path] : [];
  });

const importsOf = (source: string): string[] =>
  [...source.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g)].map(
    (m) => (m[1] ?? m[2] ?? m[3])!,
  );

/** What an import in core may name: another core file, nothing else (no framework, no node built-in). */
export const violations = (files: { path: string; source: string }[]): string[] =>
  files.flatMap(({ path, source }) =>
    importsOf(source)
      .filter((spec) => !spec.startsWith('.') || !resolve(dirname(path), spec).startsWith(CORE + '/'))
      .map((spec) => `${relative(ROOT, path)} imports ${spec}`),
  );

describe('the hexagon', () => {
  it('core imports nothing outside core', () => {
    const files = filesUnder(CORE).map((path) => ({ path, source: readFileSync(path, 'utf8') }));
    expect(files.length).toBeGreaterThan(5);
    expect(violations(files)).toEqual([]);
  });

  it('core reads the time only through the Clock port', () => {
    const offenders = filesUnder(CORE).filter((path) => /Date\.now\(\)|new Date\(\)/.test(readFileSync(path, 'utf8')));
    expect(offenders.map((p) => relative(ROOT, p))).toEqual([]);
  });

  it('the check itself catches a framework, an adapter and a built-in', () => {
    const fake = join(CORE, 'x.ts');
    expect(
      violations([
        { path: fake, source: "import express from 'express';" },
        { path: fake, source: "import { MikroStorage } from '../adapters/storage/mikro-storage.ts';" },
        { path: fake, source: "import { randomBytes } from 'node:crypto';" },
        { path: fake, source: "export { x } from '../hosts/http/app.ts';" },
        { path: fake, source: "const m = await import('undici');" },
        { path: fake, source: "import type { Clock } from './ports/clock.ts';" },
      ]),
    ).toHaveLength(5);
  });
});
