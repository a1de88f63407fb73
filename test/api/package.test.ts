import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

describe('the npm package', () => {
  it('builds to dist/ and embeds by its own name through package.json exports', async () => {
    await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: ROOT });
    const script = join(ROOT, `.embed-check-${process.pid}.mjs`);
    writeFileSync(
      script,
      `import express from 'express';
       import { createControlPlane } from 'gpu-control-plane';
       const plane = await createControlPlane({ storage: { kind: 'pglite', dataDir: 'memory://' }, operatorKeys: [],
         rateLimits: { publicPerMinute: 10, perTokenPerMinute: 10 }, logLevel: 'silent' });
       const app = express();
       app.use('/gpu', plane.router);
       const server = app.listen(0, '127.0.0.1');
       await new Promise((r) => server.once('listening', r));
       const res = await fetch('http://127.0.0.1:' + server.address().port + '/gpu/v1/tenants', {
         method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'embedded' }) });
       console.log(JSON.stringify({ status: res.status, body: await res.json() }));
       server.close();
       await plane.close();`,
    );
    try {
      const { stdout } = await run(process.execPath, [script], { cwd: ROOT });
      const result = JSON.parse(stdout.trim().split('\n').at(-1)!);
      expect(result.status).toBe(201);
      expect(result.body.id).toMatch(/^ten_/);
    } finally {
      rmSync(script, { force: true });
    }
  }, 60_000);
});
