import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, filesUnder, importsOf } from './core-files.ts';

/**
 * Composition as the wiring diagram (docs/decisions.md, "Composition as the wiring diagram"): the container is
 * injection inside hosts/composition alone. Each area registers its services in a module of
 * hosts/composition/modules/, under its class or a typed port key; nothing is registered or resolved by a
 * string, and nothing outside the composition root sees the container.
 */
const COMPOSITION = join(ROOT, 'hosts/composition');
const sources = (dirs: string[]) =>
  dirs.flatMap((dir) => filesUnder(join(ROOT, dir))).map((path) => ({ path: relative(ROOT, path), source: readFileSync(path, 'utf8') }));

/** A register or resolve whose key is a string literal. */
const BY_STRING = /\.(?:register|resolve|registerSingleton|isRegistered)\s*(?:<[^>]*>)?\(\s*['"`]/;

describe('the composition root', () => {
  const everything = sources(['core', 'adapters', 'hosts', 'test', 'bench']).filter(({ path }) => !path.endsWith('.d.ts'));

  it('alone uses the container', () => {
    const outside = everything.filter(({ path }) => !path.startsWith('hosts/composition/'));
    expect(outside.length).toBeGreaterThan(50);
    expect(outside.filter(({ source }) => importsOf(source).includes('tsyringe')).map(({ path }) => path)).toEqual([]);
    expect(outside.filter(({ source }) => /\.container\.resolve|plane\.container\b/.test(source)).map(({ path }) => path)).toEqual([]);
  });

  it('registers and resolves by class or typed port key, never by a string', () => {
    const composition = sources(['hosts/composition']);
    expect(composition.filter(({ source }) => BY_STRING.test(source)).map(({ path }) => path)).toEqual([]);
    expect(BY_STRING.test("container.resolve<Provider[]>('Providers')")).toBe(true);
    expect(BY_STRING.test('container.resolve(MarketService)')).toBe(false);
  });

  it('has each area register its own module', () => {
    const modules = filesUnder(join(COMPOSITION, 'modules')).map((path) => relative(COMPOSITION, path));
    for (const area of ['kernel', 'providers', 'market', 'payments', 'identity', 'catalog', 'rentals', 'billing', 'http']) {
      expect(modules).toContain(`modules/${area}.ts`);
    }
  });
});
