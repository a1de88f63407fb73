/**
 * `npm run api:lint`: Spectral, Redocly and the MCP Inspector's strict check over this checkout's API, on a
 * server of its own (in-memory database, a free loopback port), each tool's closing line printed. Exits 1
 * when any of them reports anything. See api-lint.ts.
 */
import type { AddressInfo } from 'node:net';
import { createHttpApp } from '../http/app.ts';
import { listenHttp } from '../http/server.ts';
import { inspectorStrict, lintDocument, type LintOutcome } from './api-lint.ts';
import { withOfflinePlane } from './offline-plane.ts';

const outcomes = await withOfflinePlane(
  async (plane) => {
    const server = listenHttp(createHttpApp(plane), 0, '127.0.0.1');
    await new Promise((listening) => server.once('listening', listening));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const post = async (path: string, body: object) =>
        (await (await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as Record<string, string>;
      const tenant = await post('/v1/tenants', { name: 'api-lint' });
      // every scope: the token lists every tool
      const { token } = await post('/v1/tokens', { tenant_id: tenant.id!, bootstrap_secret: tenant.bootstrap_secret!, scopes: ['read', 'rent', 'manage', 'billing'] });
      const document = (await (await fetch(`${base}/openapi.json`)).json()) as object;
      return [...(await lintDocument(document)), await inspectorStrict(`${base}/mcp`, token!)];
    } finally {
      server.closeAllConnections();
      await new Promise((closed) => server.close(closed));
    }
  },
  { rateLimits: { publicPerMinute: 1_000, perTokenPerMinute: 1_000 } },
);

const report = (outcome: LintOutcome) => {
  console.log(`${outcome.ok ? 'ok  ' : 'FAIL'} ${outcome.tool}: ${outcome.summary}`);
  if (!outcome.ok) console.log(outcome.output.split('\n').slice(0, 60).map((line) => `     ${line}`).join('\n'));
};
outcomes.forEach(report);
process.exitCode = outcomes.every((outcome) => outcome.ok) ? 0 : 1;
