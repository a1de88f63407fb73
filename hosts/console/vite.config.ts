import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import preact from '@preact/preset-vite';
import { defineConfig, type Plugin } from 'vite';

const OUT = join(import.meta.dirname, '../../dist/console');
/** What a first visit must download, gzip, before the console works (the console's goal, docs/benchmarks.md). */
const FIRST_LOAD_BUDGET_KB = 150;

/**
 * Prints the first load (index.html, the entry chunk, what it imports statically, its CSS) in gzip bytes, and
 * writes it to budget.json for the browser test and docs/benchmarks.md. Lazy pages (the billing chart) are not in it.
 */
function firstLoadBudget(): Plugin {
  return {
    name: 'first-load-budget',
    apply: 'build',
    writeBundle(_options, bundle) {
      const seen = new Set<string>();
      const visit = (file: string) => {
        if (seen.has(file)) return;
        seen.add(file);
        const chunk = bundle[file];
        if (chunk?.type !== 'chunk') return;
        for (const imported of chunk.imports) visit(imported);
        for (const css of chunk.viteMetadata?.importedCss ?? []) seen.add(css);
      };
      for (const [file, chunk] of Object.entries(bundle)) if (chunk.type === 'chunk' && chunk.isEntry) visit(file);
      seen.add('index.html');
      const files = [...seen].map((file) => ({ file, gzip: gzipSync(readFileSync(join(OUT, file))).length }));
      const total = files.reduce((sum, f) => sum + f.gzip, 0);
      const kb = (total / 1024).toFixed(1);
      const verdict = total <= FIRST_LOAD_BUDGET_KB * 1024 ? 'within' : 'OVER';
      console.log(`console: first load ${kb} kB gzip in ${files.length} files (${verdict} the ${FIRST_LOAD_BUDGET_KB} kB budget)`);
      writeFileSync(join(OUT, 'budget.json'), JSON.stringify({ first_load_gzip_bytes: total, files }, null, 1));
    },
  };
}

export default defineConfig({
  root: import.meta.dirname,
  base: '/console/',
  plugins: [preact({ devToolsEnabled: false, prefreshEnabled: false }), firstLoadBudget()],
  logLevel: 'warn',
  build: {
    outDir: OUT,
    emptyOutDir: true,
    target: 'es2022',
    // no inline modulepreload polyfill script: the console's CSP allows no inline script
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    reportCompressedSize: false,
  },
});
