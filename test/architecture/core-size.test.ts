import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CORE, ROOT, filesUnder } from './core-files.ts';

/** A file of core past this many lines holds more than one use case, or one that should be cut in steps. */
const MAX_LINES = 260;

/** Files allowed past it, each with why; a file listed here that shrinks under it fails the test, to be taken off. */
const LARGER: Record<string, string> = {
  'core/ports/storage.ts': 'the storage port: one small interface per store, read together by every adapter and its contract suite',
  'core/market/market-service.ts': 'the search and its cache over every provider feed: one hot path, measured by bench/search',
};

const linesOf = (path: string): number => readFileSync(path, 'utf8').split('\n').length;

/** The files of core over the limit that are not listed, and the listed ones no longer over it. */
export const oversized = (files: { path: string; lines: number }[]): string[] => [
  ...files.filter(({ path, lines }) => lines > MAX_LINES && !(path in LARGER)).map(({ path, lines }) => `${path}: ${lines} lines`),
  ...Object.keys(LARGER)
    .filter((path) => (files.find((file) => file.path === path)?.lines ?? 0) <= MAX_LINES)
    .map((path) => `${path}: listed as larger but is not (take it off the list)`),
];

describe('use cases as units (docs/decisions.md, "One node chooser")', () => {
  it(`keeps every file of core under ${MAX_LINES} lines, but the few named with why`, () => {
    const files = filesUnder(CORE).map((path) => ({ path: relative(ROOT, path), lines: linesOf(path) }));
    expect(oversized(files)).toEqual([]);
  });

  it('the check itself catches a large file and a stale exception', () => {
    expect(oversized([{ path: 'core/rentals/rental-service.ts', lines: 565 }, { path: 'core/ports/storage.ts', lines: 400 }])).toEqual([
      'core/rentals/rental-service.ts: 565 lines',
      'core/market/market-service.ts: listed as larger but is not (take it off the list)',
    ]);
  });
});
