import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CORE, ROOT, coreSources, filesUnder, importsOf } from './core-files.ts';

/** What an import in core may name: another core file, nothing else (no framework, no node built-in). */
export const violations = (files: { path: string; source: string }[]): string[] =>
  files.flatMap(({ path, source }) =>
    importsOf(source)
      .filter((spec) => !spec.startsWith('.') || !resolve(dirname(path), spec).startsWith(CORE + '/'))
      .map((spec) => `${relative(ROOT, path)} imports ${spec}`),
  );

describe('the hexagon', () => {
  it('core imports nothing outside core', () => {
    const files = coreSources();
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
