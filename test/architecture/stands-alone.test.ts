import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './core-files.ts';

/**
 * The repository stands alone: a clone of it holds no design notes from outside and no issue tracker, so its
 * comments, README and docs cite only the project's own files (docs/decisions.md sections by name), never
 * documents outside it or issue numbers, and cited decision sections exist.
 */
const tracked = (): string[] =>
  execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((path) => /\.(ts|tsx|js|md|sh|css|html|yaml|yml)$|^\.ci\//.test(path))
    .filter((path) => !path.startsWith('test/architecture/stands-alone') && path !== 'hosts/client/schema.d.ts');

/** What a clone cannot follow: the user's design documents, the folder they sit in, and issue numbers. */
const OUTSIDE = [
  /\b(?:DESIGN|SPEC|PROVIDERS|STACK)\.md\b/,
  /\.\.\/shared\b(?!\/[a-z-]+\.ts)/,
  /\b[Ii]ssues? #?\d+\b/,
  /\ba later issue\b/i,
];

describe('the repository stands alone', () => {
  const files = tracked();

  it('cites no document outside it and no issue number', () => {
    const found = files.flatMap((path) =>
      readFileSync(join(ROOT, path), 'utf8')
        .split('\n')
        .flatMap((line, i) => (OUTSIDE.some((pattern) => pattern.test(line)) ? [`${path}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(found).toEqual([]);
  });

  it('cites only decision sections that exist', () => {
    const decisions = readFileSync(join(ROOT, 'docs/decisions.md'), 'utf8');
    const headings = new Set([...decisions.matchAll(/^#{2,3} (.+)$/gm)].map((m) => m[1]!.trim()));
    const cited = files.flatMap((path) =>
      // a citation may wrap onto the comment's next line
      [...readFileSync(join(ROOT, path), 'utf8').matchAll(/decisions\.md,? "([^"]+)"/g)].map((m) => ({ path, section: m[1]!.replace(/\s*\n\s*(?:\*|\/\/)?\s*/g, ' ') })),
    );
    expect(cited.length).toBeGreaterThan(10);
    expect(cited.filter(({ section }) => !headings.has(section))).toEqual([]);
  });
});
