import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectorStrict, lintDocument } from '../../hosts/docs/api-lint.ts';
import { singleTypes } from '../../hosts/http/single-types.ts';
import { startApi, type TestApi } from '../support/api.ts';

let api: TestApi;
let token: string;
beforeAll(async () => {
  api = await startApi();
  ({ token } = await api.newTenant());
});
afterAll(async () => api?.close());

/** What each tool said, as a failure message: its findings, not just "false". */
const said = (outcome: { tool: string; summary: string; output: string }) => `${outcome.tool}: ${outcome.summary}\n${outcome.output.slice(0, 4000)}`;

describe("other people's tools read the API without a complaint", () => {
  it('Spectral (spectral:oas) and Redocly (recommended) report nothing on /openapi.json', async () => {
    const document = (await api.call('GET', '/openapi.json')).body;
    for (const outcome of await lintDocument(document)) expect(outcome.ok, said(outcome)).toBe(true);
  }, 60_000);

  it("the MCP Inspector's strict schema check finds nothing in the tools of POST /mcp", async () => {
    const outcome = await inspectorStrict(`${api.baseUrl}/mcp`, token);
    expect(outcome.ok, said(outcome)).toBe(true);
    expect(outcome.summary).toMatch(/^\d{2,} tools listed; no schema portability finding/);
  }, 60_000);

  it('the check can fail: a tag left out of the global tags is reported', async () => {
    const document = structuredClone((await api.call('GET', '/openapi.json')).body);
    document.tags = document.tags.slice(1);
    const [spectral] = await lintDocument(document);
    expect(spectral!.ok).toBe(false);
    expect(spectral!.output).toMatch(/operation-tag-defined/);
  }, 60_000);
});

describe('singleTypes', () => {
  it('spells a type array as anyOf, annotations outside, assertions in each non-null branch', () => {
    expect(singleTypes({ type: ['string', 'null'], maxLength: 3, description: 'd' })).toEqual({ description: 'd', anyOf: [{ type: 'string', maxLength: 3 }, { type: 'null' }] });
    expect(singleTypes({ properties: { a: { type: ['number', 'string'], pattern: '^1$' } } })).toEqual({
      properties: { a: { anyOf: [{ type: 'number', pattern: '^1$' }, { type: 'string', pattern: '^1$' }] } },
    });
    expect(singleTypes({ type: ['integer'] })).toEqual({ type: 'integer' });
  });
});
