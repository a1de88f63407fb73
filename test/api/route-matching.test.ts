import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../support/api.ts';

/** The router finds routes by a prepared lookup; these are the rules Express matched them by, kept. */
describe('route matching', () => {
  let api: TestApi;
  let token: string;
  beforeAll(async () => {
    api = await startApi();
    token = (await api.newTenant()).token;
  });
  afterAll(async () => api?.close());

  it('ignores the case of a path and one trailing slash', async () => {
    for (const path of ['/v1/tokens/self', '/V1/Tokens/SELF', '/v1/tokens/self/']) {
      const res = await api.call('GET', path, { token });
      expect(res.status, path).toBe(200);
      expect(res.body.id, path).toEqual(expect.stringMatching(/^tok_/));
    }
    expect((await api.call('GET', '/v1/tokens/self//', { token })).status).toBe(404);
  });

  it('prefers the route listed first: /v1/tokens/self is not the token named "self"', async () => {
    const self = await api.call('GET', '/v1/tokens/self', { token });
    expect(self.status).toBe(200);
    // DELETE has only the parameter route: "self" is read as a token id there, and refused as one
    const removed = await api.call('DELETE', '/v1/tokens/self', { token });
    expect(removed.status).toBe(422);
    expect(removed.body.errors[0].loc).toEqual(['path', 'token_id']);
  });

  it('answers HEAD on a GET route with its headers and no body, and another method on a known path with 405', async () => {
    const head = await fetch(`${api.baseUrl}/healthz`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    const other = await api.call('PUT', '/healthz');
    expect(other.status).toBe(405);
    expect(other.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });

  it('decodes path parameters, and refuses undecodable ones with 400 whatever the method', async () => {
    expect((await api.call('DELETE', '/v1/tokens/tok_%61bc', { token })).status).toBe(404); // tok_abc: a well-formed id, not ours
    for (const method of ['GET', 'DELETE']) {
      const res = await api.call(method, '/v1/tokens/%E0%A4%A', { token });
      expect(res.status, method).toBe(400);
      expect(res.body.detail).toMatch(/percent-encod/);
    }
  });
});
