import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../support/api.ts';

let api: TestApi;
let token: string;

beforeAll(async () => {
  api = await startApi();
  ({ token } = await api.newTenant());
});
afterAll(() => api.close());

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The bytes as sent, not decoded (fetch would decode them). */
  body: Buffer;
}

function raw(method: 'GET' | 'HEAD', path: string, acceptEncoding?: string): Promise<RawAnswer> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (acceptEncoding !== undefined) headers['accept-encoding'] = acceptEncoding;
  return new Promise((resolve, reject) => {
    const req = request(`${api.baseUrl}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const decoders: Record<string, (body: Buffer) => Buffer> = { gzip: gunzipSync, br: brotliDecompressSync };

const varyNames = (answer: RawAnswer) => String(answer.headers.vary ?? '').toLowerCase().split(/\s*,\s*/);

describe.each(['/v1/gpus', '/v1/gpus?limit=1000&gpu_type=h100&extra_filters=reliability%3E%3D0.9', '/v1/marketplace?gpu_type=A100'])('GET %s', (path) => {
  it('sends the same JSON to identity, gzip and brotli clients, with Vary, Content-Encoding and Content-Length', async () => {
    const identity = await raw('GET', path);
    expect(identity.status).toBe(200);
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.headers['content-type']).toMatch(/^application\/json/);
    expect(varyNames(identity)).toContain('accept-encoding');
    expect(Number(identity.headers['content-length'])).toBe(identity.body.length);
    const json = JSON.parse(identity.body.toString('utf8'));
    expect(json.providers[0]).toMatchObject({ provider: 'sandbox', status: 'ok' });

    for (const [acceptEncoding, coding] of [['gzip', 'gzip'], ['br', 'br'], ['gzip, deflate, br', 'br'], ['br;q=0.1, gzip;q=0.9', 'gzip']] as const) {
      const answer = await raw('GET', path, acceptEncoding);
      expect(answer.status).toBe(200);
      expect(answer.headers['content-encoding'], acceptEncoding).toBe(coding);
      expect(varyNames(answer)).toContain('accept-encoding');
      expect(Number(answer.headers['content-length'])).toBe(answer.body.length);
      expect(answer.body.length).toBeLessThan(identity.body.length);
      // byte for byte the identity answer once decoded, not only equal JSON
      expect(decoders[coding]!(answer.body).equals(identity.body), acceptEncoding).toBe(true);
    }
  });

  it('answers HEAD with the headers of GET for the same coding and no body', async () => {
    for (const acceptEncoding of [undefined, 'gzip', 'br']) {
      const get = await raw('GET', path, acceptEncoding);
      const head = await raw('HEAD', path, acceptEncoding);
      expect(head.status).toBe(200);
      expect(head.body.length).toBe(0);
      expect(head.headers['content-length']).toBe(String(get.body.length));
      expect(head.headers['content-encoding']).toBe(get.headers['content-encoding']);
      expect(varyNames(head)).toContain('accept-encoding');
    }
  });
});

describe('a cached answer after time has passed', () => {
  it('carries the new snapshot age in every coding, though its nodes were compressed once, before', async () => {
    const before = await raw('GET', '/v1/gpus?limit=7', 'br');
    expect(JSON.parse(brotliDecompressSync(before.body).toString()).providers[0].snapshot_age_seconds).toBe(0);
    api.clock.advance(42_000); // less than the refresh interval: the same snapshot, the same cache entry
    const identity = await raw('GET', '/v1/gpus?limit=7');
    const expected = JSON.parse(identity.body.toString());
    expect(expected.providers[0].snapshot_age_seconds).toBe(42);
    for (const coding of ['gzip', 'br'] as const) {
      const answer = await raw('GET', '/v1/gpus?limit=7', coding);
      expect(decoders[coding]!(answer.body).equals(identity.body)).toBe(true);
    }
  });
});

describe('what is not compressed', () => {
  it('sends identity when nothing we have is acceptable, and errors as plain JSON', async () => {
    const deflateOnly = await raw('GET', '/v1/gpus?limit=3', 'deflate');
    expect(deflateOnly.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(deflateOnly.body.toString()).nodes).toHaveLength(3);
    const invalid = await raw('GET', '/v1/gpus?limit=0', 'br');
    expect(invalid.status).toBe(422);
    expect(invalid.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(invalid.body.toString()).detail).toContain('limit');
  });
});
