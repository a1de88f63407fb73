import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CORE, ROOT, coreSources, relativeImports, treeSources } from './core-files.ts';

/**
 * The import cycles among `files`, each as the files around it (`a -> b -> a`): a depth-first walk over the
 * imports, where an import of a file still on the walk's path closes a cycle. Each cycle is named once per
 * import that closes it, which is enough to fail and to say where.
 */
export function importCycles(files: { path: string; source: string }[]): string[] {
  const graph = new Map(files.map(({ path, source }) => [path, relativeImports(path, source)]));
  const done = new Set<string>();
  const path: string[] = [];
  const onPath = new Set<string>();
  const cycles: string[] = [];
  const visit = (file: string): void => {
    path.push(file);
    onPath.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next) || done.has(next)) continue;
      if (onPath.has(next)) cycles.push([...path.slice(path.indexOf(next)), next].map((f) => relative(ROOT, f)).join(' -> '));
      else visit(next);
    }
    path.pop();
    onPath.delete(file);
    done.add(file);
  };
  for (const file of [...graph.keys()].sort()) if (!done.has(file)) visit(file);
  return cycles;
}

/** Files outside core/sweep that import one inside it: the conductor knows every area, no area knows the conductor. */
export const importsOfTheSweep = (files: { path: string; source: string }[]): string[] =>
  files
    .filter(({ path }) => !path.startsWith(join(CORE, 'sweep') + '/'))
    .flatMap(({ path, source }) =>
      relativeImports(path, source)
        .filter((target) => target.startsWith(join(CORE, 'sweep') + '/'))
        .map((target) => `${relative(ROOT, path)} imports ${relative(ROOT, target)}`),
    );

describe('the import graph of core and of the whole tree', () => {
  it('has no cycle: every file can be read, tested and moved with only what it imports', () => {
    const files = coreSources();
    expect(files.length).toBeGreaterThan(5);
    expect(importCycles(files)).toEqual([]);
  });

  it('has no cycle in the whole tree either (core, adapters, hosts; type-only imports included)', () => {
    const files = treeSources();
    for (const dir of ['adapters', 'hosts/composition', 'hosts/console']) expect(files.some(({ path }) => path.startsWith(join(ROOT, dir) + '/'))).toBe(true);
    expect(importCycles(files)).toEqual([]);
  });

  it('the sweep conducts the other areas and none of them imports it (what a step needs is named in the step)', () => {
    const files = coreSources();
    expect(files.some(({ path }) => path.startsWith(join(CORE, 'sweep') + '/'))).toBe(true);
    expect(importsOfTheSweep(files)).toEqual([]);
    expect(importsOfTheSweep([{ path: join(CORE, 'billing/x.ts'), source: "import type { SweepReport } from '../sweep/pass-report.ts';" }])).toEqual([
      'core/billing/x.ts imports core/sweep/pass-report.ts',
    ]);
  });

  it('the check itself finds a cycle through a type import, a re-export and three files, and no cycle in a chain', () => {
    const at = (name: string) => join(CORE, name);
    expect(
      importCycles([
        { path: at('a.ts'), source: "import type { B } from './b.ts';" },
        { path: at('b.ts'), source: "export { a } from './a.ts';" },
        { path: at('x/c.ts'), source: "import { d } from '../d.ts';" },
        { path: at('d.ts'), source: "import { e } from './e.ts';" },
        { path: at('e.ts'), source: "const c = await import('./x/c.ts');" },
        { path: at('f.ts'), source: "import { g } from './g.ts';\nimport { a } from './a.ts';" },
        { path: at('g.ts'), source: "import { h } from './h.ts';" },
        { path: at('h.ts'), source: "import { a } from './a.ts';" },
      ]),
    ).toEqual(['core/a.ts -> core/b.ts -> core/a.ts', 'core/d.ts -> core/e.ts -> core/x/c.ts -> core/d.ts']);
  });
});
