import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type RequestHandler, type Router } from 'express';
import helmet from 'helmet';

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
    // hashed file names: a year, immutable; index.html is read on every visit so a new build shows at once
    site.use('/console/assets', express.static(join(built, 'assets'), { immutable: true, maxAge: '365d', index: false, fallthrough: false }));
    const index = readFileSync(join(built, 'index.html'));
    site.get(/^\/console(\/.*)?$/, (_req, res) => {
      res.set('Cache-Control', 'no-cache').type('html').send(index);
    });
  } else {
    site.get(/^\/console(\/.*)?$/, (_req, res) => {
      res.status(503).json({ detail: 'the console is not built: npm start builds it (or run npm run build:console)' });
    });
  }

  const scalar = scalarBundle();
  site.use('/docs', docsHeaders);
  site.get('/docs', (_req, res) => {
    res.set('Cache-Control', 'no-cache').type('html').send(DOCS_PAGE);
  });
  site.get('/docs/scalar.js', (_req, res) => {
    res.set('Cache-Control', 'public, max-age=86400').sendFile(scalar);
  });
  return site;
}

/** No inline script anywhere, nothing but this origin, never framed, no Referer (a token in a URL must not leak). */
const consoleHeaders: RequestHandler = helmet({
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
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
    },
  },
  referrerPolicy: { policy: 'no-referrer' },
  crossOriginEmbedderPolicy: false,
});

/**
 * Scalar injects its stylesheet as <style> elements, so styles may be inline there; scripts still may not. Its
 * "try it" requests go to this origin only.
 */
const docsHeaders: RequestHandler = helmet({
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:'],
      fontSrc: ["'self'", 'data:'],
      connectSrc: ["'self'"],
      workerSrc: ["'self'", 'blob:'],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
      baseUri: ["'none'"],
      objectSrc: ["'none'"],
    },
  },
  referrerPolicy: { policy: 'no-referrer' },
  crossOriginEmbedderPolicy: false,
});

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
    <script id="api-reference" data-url="/openapi.json" data-configuration='{"withDefaultFonts":false,"hideClientButton":true,"telemetry":false,"showDeveloperTools":"never"}'></script>
    <script src="/docs/scalar.js"></script>
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
