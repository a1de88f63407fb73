import { describe, expect, it } from 'vitest';
import { negotiateCoding } from '../../hosts/http/content-coding.ts';

describe('negotiateCoding: Accept-Encoding to the coding of the answer', () => {
  const cases: [string | undefined, string][] = [
    [undefined, 'identity'],
    ['', 'identity'],
    ['identity', 'identity'],
    ['gzip', 'gzip'],
    ['x-gzip', 'gzip'],
    ['br', 'br'],
    ['GZIP', 'gzip'],
    ['gzip, deflate, br', 'br'], // a tie: brotli
    ['gzip, deflate, br, zstd', 'br'],
    ['deflate', 'identity'], // nothing we send
    ['zstd, deflate', 'identity'],
    ['br;q=0.5, gzip', 'gzip'],
    ['br;q=0.5, gzip;q=0.4', 'br'],
    ['br ; q=0.9 , gzip ; q = 1', 'gzip'],
    ['gzip;q=1.0, br;q=0.999', 'gzip'],
    ['br;q=0, gzip', 'gzip'],
    ['br;q=0, gzip;q=0', 'identity'],
    ['*', 'br'],
    ['*;q=0.2, br;q=0.1', 'gzip'],
    ['*;q=0', 'identity'],
    ['gzip;q=0.5, identity', 'identity'], // identity explicitly preferred
    ['gzip;q=0.5, identity;q=0.5', 'gzip'],
    ['gzip;q=0.5', 'gzip'],
    ['br;q=2, gzip', 'gzip'], // an unreadable weight leaves that element out
    ['br;q=abc', 'identity'],
    [',,gzip,,', 'gzip'],
  ];
  it.each(cases)('%j answers %s', (header, coding) => {
    expect(negotiateCoding(header)).toBe(coding);
  });
});
