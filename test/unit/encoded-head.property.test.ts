import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Coding } from '../../hosts/http/content-coding.ts';
import { CompressionWorker } from '../../hosts/http/compression-worker.ts';
import { encodeHead, EncodedHeads } from '../../hosts/http/encoded-head.ts';

const decode: Record<Coding, (body: Buffer) => Buffer> = {
  identity: (body) => body,
  gzip: (body) => gunzipSync(body),
  br: (body) => brotliDecompressSync(body),
};

/** JSON-like text, so the compressors find repeats as they do in answers, and any bytes. */
const bytes = fc.oneof(
  fc.array(fc.constantFrom('{"id":"a:1",', '"price":12,', '"ok":true}', ',', '[', ']', 'é', '€'), { maxLength: 2_000 }).map((parts) => Buffer.from(parts.join(''))),
  fc.uint8Array({ maxLength: 3_000 }).map((array) => Buffer.from(array)),
);

describe('encodeHead: a head compressed once, any tail appended', () => {
  it('decodes to the head then the tail, for every coding and many tails on one head', () => {
    fc.assert(
      fc.property(bytes, fc.array(bytes, { minLength: 1, maxLength: 4 }), fc.constantFrom<Coding>('identity', 'gzip', 'br'), (head, tails, coding) => {
        const encoded = encodeHead(head, coding);
        for (const tail of tails) expect(decode[coding](Buffer.concat(encoded.finish(tail))).equals(Buffer.concat([head, tail]))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('carries tails longer than one stored block (64 kB) and empty ones', () => {
    const head = Buffer.from('{"nodes":[' + '{"id":"sandbox:1","x":1},'.repeat(5_000));
    for (const coding of ['gzip', 'br'] as const) {
      const encoded = encodeHead(head, coding);
      for (const size of [0, 1, 65_535, 65_536, 200_001]) {
        const tail = Buffer.alloc(size, 'y');
        expect(decode[coding](Buffer.concat(encoded.finish(tail))).equals(Buffer.concat([head, tail])), `${coding}, tail of ${size} bytes`).toBe(true);
      }
    }
  });

  it('compresses the head: a repetitive 57 kB head becomes a few kB', () => {
    const head = Buffer.from(JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ id: `sandbox:${100_000 + i}`, gpu_type: 'H100', price_per_hour_cents: 200 + i, country: 'US' }))));
    for (const coding of ['gzip', 'br'] as const) expect(Buffer.concat(encodeHead(head, coding).finish(Buffer.from('}'))).length).toBeLessThan(head.length / 4);
  });
});

describe('EncodedHeads', () => {
  it('renders an answer once however many codings and requests ask for it', () => {
    let renders = 0;
    const heads = new EncodedHeads((answer: { text: string }) => {
      renders++;
      return [Buffer.from(answer.text)];
    });
    const answer = { text: '{"nodes":[1,2,3],' };
    for (const coding of ['identity', 'gzip', 'br', 'gzip'] as const) {
      expect(decode[coding](Buffer.concat(heads.body(answer, coding, '"total":3}'))).toString()).toBe('{"nodes":[1,2,3],"total":3}');
    }
    expect(renders).toBe(1);
    expect(Buffer.concat(heads.body({ text: '{"nodes":[],' }, 'br', '"total":0}')).length).toBeGreaterThan(0);
    expect(renders).toBe(2);
  });

  it('keeps each answer\'s encodings apart though heads are gathered in one reused buffer, also past its size', () => {
    const heads = new EncodedHeads((parts: Buffer[]) => parts);
    const answers = [70_000, 10, 200_000, 3].map((size, i) => [Buffer.from('{"nodes":['), Buffer.alloc(size, 97 + i), Buffer.from('],')]);
    const expected = (answer: Buffer[]) => Buffer.concat([...answer, Buffer.from('"total":1}')]);
    for (const round of [1, 2]) {
      for (const answer of answers) {
        for (const coding of ['br', 'gzip', 'identity'] as const) {
          expect(decode[coding](Buffer.concat(heads.body(answer, coding, '"total":1}'))).equals(expected(answer)), `round ${round}, ${coding}`).toBe(true);
        }
      }
    }
  });
});

describe('EncodedHeads.once: an answer made for one request', () => {
  it('sends the same bytes as a kept answer would, in every coding, and keeps nothing', async () => {
    let renders = 0;
    const heads = new EncodedHeads((parts: Buffer[]) => {
      renders++;
      return parts;
    });
    await fc.assert(
      fc.asyncProperty(fc.array(bytes, { minLength: 1, maxLength: 5 }), fc.string({ maxLength: 300 }), fc.constantFrom<Coding>('identity', 'gzip', 'br'), async (parts, tail, coding) => {
        const before = renders;
        const sent = await heads.once(parts, coding, tail);
        const once = decode[coding](Buffer.concat(sent.chunks));
        sent.sent?.();
        expect(once.equals(Buffer.concat([...parts, Buffer.from(tail)]))).toBe(true);
        expect(once.equals(decode[coding](Buffer.concat(heads.body(parts, coding, tail))))).toBe(true);
        // a send buffer given back and taken again carries the new answer only
        expect(once.equals(decode[coding](Buffer.concat((await heads.once(parts, coding, tail)).chunks)))).toBe(true);
        // once() renders every time (nothing kept), body() once and keeps it
        expect(renders - before).toBe(3);
      }),
      { numRuns: 150 },
    );
  });
});

describe('EncodedHeads.once with a compression worker', () => {
  it('sends what this thread would have made, byte for byte, from the worker', async () => {
    const worker = new CompressionWorker();
    const here = new EncodedHeads((parts: Buffer[]) => parts);
    const there = new EncodedHeads((parts: Buffer[]) => parts, worker);
    await fc.assert(
      fc.asyncProperty(fc.array(bytes, { minLength: 1, maxLength: 5 }), fc.string({ maxLength: 300 }), fc.constantFrom<'gzip' | 'br'>('gzip', 'br'), async (parts, tail, coding) => {
        const made = Buffer.concat((await there.once(parts, coding, tail)).chunks);
        expect(made.equals(Buffer.concat((await here.once(parts, coding, tail)).chunks))).toBe(true);
        expect(decode[coding](made).equals(Buffer.concat([...parts, Buffer.from(tail)]))).toBe(true);
      }),
      { numRuns: 100 },
    );
    // several at once come back each to its own answer
    const answers = Array.from({ length: 20 }, (_, i) => [Buffer.from(`{"nodes":[${i}],`)]);
    const sent = await Promise.all(answers.map((answer, i) => there.once(answer, i % 2 ? 'br' : 'gzip', `"total":${i}}`)));
    sent.forEach(({ chunks }, i) => expect(decode[i % 2 ? 'br' : 'gzip'](Buffer.concat(chunks)).toString()).toBe(`{"nodes":[${i}],"total":${i}}`));
  });
});
