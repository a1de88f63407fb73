import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, constants, gzip, gzipSync } from 'node:zlib';
import express, { type RequestHandler, type Response, type Router } from 'express';
import helmet from 'helmet';
import { negotiateCoding } from './content-coding.ts';

/**
 * The web console (hosts/console, built by Vite into dist/console) at /console, with index.html for every path
 * under it (the app routes in the browser), / sent there, and the API reference at /docs (Scalar's standalone
 * bundle from its package, no CDN). Mounted after the API's router, so API requests never pass through here.
 */
export function consoleSite(): Router {
  const site = express.Router({ caseSensitive: true, strict: false });
  const built = builtConsole();

  // '/' and '/?checkout=success&session_id=…' (a card checkout's return address) go to the console, query kept
  site.get('/', (req, res) => {
    const query = req.originalUrl.indexOf('?');
    res.redirect(302, `/console/${query >= 0 ? req.originalUrl.slice(query) : ''}`);
  });

  site.use('/console', consoleHeaders);
  if (built) {
    // hashed file names: a year, immutable; compressed once here, so a first visit downloads what the build measured
    const assets = compressedAssets(join(built, 'assets'));
    site.get('/console/assets/:file', (req, res) => {
      const asset = assets.get(req.params.file);
      if (!asset) return void res.status(404).json({ detail: `no console file ${req.params.file}; reload the console (a newer build replaced it)` });
      res.set('Cache-Control', 'public, max-age=31536000, immutable');
      send(res, asset, negotiateCoding(req.get('accept-encoding')));
    });
    const index = readFileSync(join(built, 'index.html'));
    site.get(/^\/console(\/.*)?$/, (_req, res) => {
      res.set('Cache-Control', 'no-cache').type('html').send(index);
    });
  } else {
    site.get(/^\/console(\/.*)?$/, (_req, res) => {
      res.status(503).json({ detail: 'the console is not built: npm start builds it (or run npm run build:console)' });
    });
  }

  // 4.3 MB of JavaScript, 1.2 MB gzip: compressed on the first visit of /docs, not at start
  let scalar: Promise<Asset> | null = null;
  site.use('/docs', docsHeaders);
  site.get('/docs', (_req, res) => {
    res.set('Cache-Control', 'no-cache').type('html').send(DOCS_PAGE);
  });
  site.get('/docs/names.js', (_req, res) => {
    res.set('Cache-Control', 'no-cache').type('text/javascript').send(DOCS_NAMES);
  });
  site.get('/docs/scalar.js', async (req, res, next) => {
    try {
      scalar ??= compressLater(scalarBundle());
      const asset = await scalar;
      res.set('Cache-Control', 'public, max-age=86400');
      send(res, asset, negotiateCoding(req.get('accept-encoding')));
    } catch (error) {
      scalar = null;
      next(error);
    }
  });
  return site;
}

interface Asset {
  type: string;
  identity: Buffer;
  gzip: Buffer;
  br: Buffer;
}

const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.svg': 'image/svg+xml', '.woff2': 'font/woff2', '.png': 'image/png' };
const typeOf = (file: string) => TYPES[extname(file)] ?? 'application/octet-stream';

function send(res: Response, asset: Asset, coding: 'br' | 'gzip' | 'identity'): void {
  res.set('Vary', 'Accept-Encoding').type(asset.type);
  if (coding !== 'identity') res.set('Content-Encoding', coding);
  res.send(asset[coding]);
}

/** The console's few built files, each kept as is, gzip and brotli (tens of kB in all). */
function compressedAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  if (!existsSync(dir)) return assets;
  for (const file of readdirSync(dir)) {
    const identity = readFileSync(join(dir, file));
    assets.set(file, { type: typeOf(file), identity, gzip: gzipSync(identity, { level: 9 }), br: brotliCompressSync(identity, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }) });
  }
  return assets;
}

async function compressLater(path: string): Promise<Asset> {
  const identity = await readFile(path);
  const [gzipped, br] = await Promise.all([promisify(gzip)(identity, { level: 6 }), promisify(brotliCompress)(identity, { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } })]);
  return { type: typeOf(path), identity, gzip: gzipped, br };
}

/** No inline script anywhere, nothing but this origin, never framed, no Referer (a token in a URL must not leak). */
const CONSOLE_DIRECTIVES = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", 'data:'],
  fontSrc: ["'self'"],
  connectSrc: ["'self'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  baseUri: ["'none'"],
  objectSrc: ["'none'"],
};

const withPolicy = (directives: Record<string, string[]>): RequestHandler =>
  helmet({
    contentSecurityPolicy: { useDefaults: false, directives },
    referrerPolicy: { policy: 'no-referrer' },
    xFrameOptions: { action: 'deny' },
    // TLS is the proxy's to declare, for every name it serves
    strictTransportSecurity: false,
    crossOriginEmbedderPolicy: false,
  });

const consoleHeaders = withPolicy(CONSOLE_DIRECTIVES);

/**
 * Scalar injects its stylesheet as <style> elements, so styles may be inline there; scripts still may not. Its
 * "try it" requests go to this origin only.
 */
const docsHeaders = withPolicy({
  ...CONSOLE_DIRECTIVES,
  styleSrc: ["'self'", "'unsafe-inline'"],
  fontSrc: ["'self'", 'data:'],
  workerSrc: ["'self'", 'blob:'],
});

/**
 * Light mode only, with Scalar's greys and method colours darkened to a 4.5:1 contrast on its backgrounds (axe
 * finds its defaults under it); no fonts from Scalar's CDN, no telemetry.
 */
const SCALAR_CONFIGURATION = {
  withDefaultFonts: false,
  hideClientButton: true,
  telemetry: false,
  showDeveloperTools: 'never',
  forceDarkModeState: 'light',
  hideDarkModeToggle: true,
  customCss: [
    '.light-mode, .light-mode .scalar-app, .scalar-app {',
    '--scalar-color-2: #3f3f46; --scalar-color-3: #4b5563; --scalar-sidebar-color-2: #3f3f46;',
    '--scalar-color-blue: #1d4ed8; --scalar-color-green: #047857; --scalar-color-orange: #b45309;',
    '--scalar-color-red: #b91c1c; --scalar-color-purple: #6d28d9; --scalar-color-yellow: #854d0e;',
    '--scalar-color-accent: #1d4ed8; }',
  ].join(' '),
};

/** Scalar's copy buttons are icons without a name; this names them as they appear (no inline script allowed). */
const DOCS_NAMES = `const name = () => {
  for (const button of document.querySelectorAll('button[class*="copy-button"]:not([aria-label])')) button.setAttribute('aria-label', 'Copy');
};
new MutationObserver(name).observe(document.documentElement, { childList: true, subtree: true });
name();
`;

const DOCS_PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>API reference · GPU control plane</title>
    <link rel="icon" href="data:," />
  </head>
  <body>
    <noscript>The API reference needs JavaScript; the document itself is at <a href="/openapi.json">/openapi.json</a>.</noscript>
    <script id="api-reference" data-url="/openapi.json" data-configuration='${JSON.stringify(SCALAR_CONFIGURATION)}'></script>
    <script src="/docs/scalar.js"></script>
    <script src="/docs/names.js"></script>
  </body>
</html>
`;

/** dist/console beside the compiled server (dist/hosts/http) or, running the TypeScript, under the repository's dist. */
function builtConsole(): string | null {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const dir of [join(here, '../../console'), join(here, '../../dist/console')]) if (existsSync(join(dir, 'index.html'))) return dir;
  return null;
}

function scalarBundle(): string {
  const entry = fileURLToPath(import.meta.resolve('@scalar/api-reference'));
  return join(dirname(entry), 'browser', 'standalone.js');
}
