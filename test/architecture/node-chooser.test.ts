import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CORE, ROOT, coreSources } from './core-files.ts';

const CHOOSER = join(CORE, 'market', 'node-chooser.ts');

/** What reads a node id by hand: asks a provider whether an offer id is its own, or cuts an id named like a node's. */
const READS_NODE_ID = /\.isOfferId\(|\b[A-Za-z]*[nN]odeId\??\.(indexOf|lastIndexOf|split|slice|substring|startsWith)\(/;

/** The files of core, but the chooser, that read a node id themselves. */
export const nodeIdReaders = (files: { path: string; source: string }[]): string[] =>
  files.filter(({ path, source }) => path !== CHOOSER && READS_NODE_ID.test(source)).map(({ path }) => relative(ROOT, path));

describe('one node chooser (docs/decisions.md, "One node chooser")', () => {
  it('is the only file of core that reads a node id', () => {
    expect(nodeIdReaders(coreSources())).toEqual([]);
  });

  it('the check itself catches a node id split, sliced or asked of a provider by hand', () => {
    const fake = join(CORE, 'x.ts');
    expect(
      nodeIdReaders([
        { path: fake, source: "const [provider, offer] = request.nodeId.split(':');" },
        { path: fake, source: "const at = nodeId.indexOf(':');" },
        { path: fake, source: 'if (provider.isOfferId(offerId)) return;' },
        { path: fake, source: "const name = reservation.nodeId?.slice(0, 7);" },
        { path: fake, source: 'const node = this.chooser.nodeOf(request.nodeId);' },
        { path: CHOOSER, source: "const at = nodeId.indexOf(':');" },
      ]),
    ).toHaveLength(4);
  });
});
