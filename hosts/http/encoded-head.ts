import zlib from 'node:zlib';
import type { Coding } from './content-coding.ts';

/**
 * Chosen by measurement on the 57 kB head of a search answer (docs/benchmarks.md): brotli quality 1 makes
 * 4.2 kB in 80 µs and gzip level 3 makes 4.2 kB in 115 µs (level 1 is no faster, level 6 makes 3.6 kB in
 * 280 µs, brotli 5 3.2 kB in 450 µs, brotli 11 2.9 kB in 130 ms). A cache miss compresses on the request's
 * own time, and with 32 connections on one core it has about 100 µs to spare; a kilobyte less on the
 * wire is not worth 4 times that.
 */
export const GZIP_LEVEL = 3;
export const BROTLI_QUALITY = 1;

/**
 * zlib's output buffer. Its default (16 kB) is an ArrayBuffer of its own per call: memory outside the heap
 * that V8 counts as external, and a full collection came every ~2,500 compressions on that count alone
 * (15-100 ms over the 80 MB of a 50,000-offer snapshot; measured: 4 per 10,000 calls, none with 2 kB).
 * Chunks under 4 kB come from Node's shared buffer pool; a compressed answer is a few of them.
 */
const CHUNK = 2 * 1024;

/** How a head is compressed, the same on this thread and in the compression worker (compression-worker.ts). */
export const GZIP_OPTIONS: zlib.ZlibOptions = { level: GZIP_LEVEL, chunkSize: CHUNK, finishFlush: zlib.constants.Z_SYNC_FLUSH };
export const brotliOptions = (length: number): zlib.BrotliOptions => ({
  chunkSize: CHUNK,
  // A flush ends on a byte boundary (padded with an empty metadata block) with the stream still open.
  finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH,
  params: {
    [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
    [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
    [zlib.constants.BROTLI_PARAM_SIZE_HINT]: length,
  },
});

/** What a compressor makes of one head: its compressed, flushed start (deflate blocks for gzip, without the gzip header), and for gzip the head's CRC-32. */
export interface CompressedStart {
  start: Buffer;
  crc: number;
}

/** Compresses heads elsewhere than on the calling thread (compression-worker.ts). */
export interface Compressor {
  /** `head` is handed over: the caller no longer uses its memory. */
  compress(head: Uint8Array<ArrayBuffer>, coding: 'gzip' | 'br'): Promise<CompressedStart>;
}

/** Stored deflate blocks and uncompressed brotli meta-blocks hold at most this many bytes each. */
const BLOCK = 65_535;

/**
 * The fixed head of a body, encoded once in one content coding, to which each answer appends its own
 * tail (a few hundred bytes that change every second: snapshot ages) without compressing the head again.
 * The head is compressed and flushed to a byte boundary, without ending the stream; the tail follows as
 * stored (uncompressed) blocks that end it: gzip's CRC-32 and length are carried on from the head's.
 */
export interface EncodedHead {
  readonly coding: Coding;
  /** The whole body in this coding, the head then `tail`, as chunks to write in turn (the head is not copied). */
  finish(tail: Buffer): Buffer[];
}

/**
 * Only the identity coding keeps `head`; the others keep what they made of it, copied into memory of its own
 * unless `keep` is false (an answer made for one request: nothing of it outlives the request).
 */
export function encodeHead(head: Buffer, coding: Coding, keep = true): EncodedHead {
  const own = keep ? kept : joined;
  switch (coding) {
    case 'identity':
      return { coding, finish: (tail) => [head, tail] };
    case 'gzip':
      return gzipHead(head, own);
    case 'br':
      return brotliHead(head, own);
  }
}

const joined = (parts: readonly Buffer[]): Buffer => (parts.length === 1 ? parts[0]! : Buffer.concat(parts));

/** A kept answer's chunks for one tail: compressed ones joined in memory of their own. */
const finished = (head: EncodedHead, tail: string): Buffer[] => {
  const chunks = head.finish(Buffer.from(tail));
  return head.coding === 'identity' ? chunks : [kept(chunks)];
};

/**
 * Bytes a cache keeps, in memory of their own: zlib answers a slice of its 16 kB output buffer, and small
 * buffers come from a shared pool, so keeping either would keep far more than the head.
 */
function kept(parts: readonly Buffer[]): Buffer {
  let length = 0;
  for (const part of parts) length += part.length;
  const bytes = Buffer.allocUnsafeSlow(length);
  let offset = 0;
  for (const part of parts) offset += part.copy(bytes, offset);
  return bytes;
}

// RFC 1952: magic, deflate, no flags, no modification time, no extra flags, OS unknown.
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);

function gzipHead(head: Buffer, own: (parts: readonly Buffer[]) => Buffer): EncodedHead {
  // A sync flush ends on a byte boundary with the stream still open (RFC 1951 §3.2.4's empty stored block).
  return gzipFinisher(own([GZIP_HEADER, zlib.deflateRawSync(head, GZIP_OPTIONS)]), zlib.crc32(head), head.length);
}

/** A gzip head from its compressed start (header and deflate blocks), and the CRC-32 and length of the head. */
export function gzipFinisher(start: Buffer, headCrc: number, headLength: number): EncodedHead {
  return {
    coding: 'gzip',
    finish(tail) {
      const parts: Buffer[] = [start];
      for (let offset = 0; ; offset += BLOCK) {
        const data = tail.subarray(offset, offset + BLOCK);
        const last = offset + BLOCK >= tail.length;
        // stored block: BFINAL and BTYPE 00 in the first byte, then LEN and its complement, little-endian
        const block = Buffer.allocUnsafe(5);
        block[0] = last ? 1 : 0;
        block.writeUInt16LE(data.length, 1);
        block.writeUInt16LE(~data.length & 0xffff, 3);
        parts.push(block, data);
        if (last) break;
      }
      const trailer = Buffer.allocUnsafe(8);
      trailer.writeUInt32LE(zlib.crc32(tail, headCrc), 0);
      trailer.writeUInt32LE((headLength + tail.length) >>> 0, 4);
      parts.push(trailer);
      return parts;
    },
  };
}

// RFC 7932 §9.2: ISLAST and ISLASTEMPTY set, the rest of the byte zero.
const BROTLI_END = Buffer.from([0b11]);

function brotliHead(head: Buffer, own: (parts: readonly Buffer[]) => Buffer): EncodedHead {
  return brotliFinisher(own([zlib.brotliCompressSync(head, brotliOptions(head.length))]));
}

/** A brotli head from its compressed, flushed start. */
export function brotliFinisher(start: Buffer): EncodedHead {
  return {
    coding: 'br',
    finish(tail) {
      const parts: Buffer[] = [start];
      for (let offset = 0; offset < tail.length; offset += BLOCK) {
        const data = tail.subarray(offset, offset + BLOCK);
        // meta-block header, least significant bit first: ISLAST 0, MNIBBLES 4 (as 00), MLEN - 1 in 16 bits,
        // ISUNCOMPRESSED 1, then zero bits to the byte boundary; the data follows as is
        const bits = ((data.length - 1) << 3) | (1 << 19);
        parts.push(Buffer.from([bits & 0xff, (bits >> 8) & 0xff, bits >> 16]), data);
      }
      parts.push(BROTLI_END);
      return parts;
    },
  };
}

/**
 * The heads of cached answers: each rendered once (as parts, e.g. each node's JSON, shared between answers),
 * and encoded once per coding a client asks for. An entry lives as long as the answer it was made from (a
 * key of the market's answer cache), so it is made once per cache entry and goes when that entry does.
 * A head is copied whole only for a client that wants it as is; to be compressed it is gathered in one
 * reused buffer, so a cache miss allocates little more than what the cache keeps.
 */
export class EncodedHeads<Answer extends object> {
  private readonly render: (answer: Answer) => readonly Buffer[];
  private readonly offThread: Compressor | undefined;
  private readonly entries = new WeakMap<Answer, { parts: readonly Buffer[]; encoded: Partial<Record<Coding, { head: EncodedHead; tail: string; body: Buffer[] }>> }>();
  private scratch = Buffer.allocUnsafe(64 * 1024);
  private readonly sendBuffers = new SendBuffers();

  /** `offThread`: where answers made for one request are compressed (kept ones are compressed here, once). */
  constructor(render: (answer: Answer) => readonly Buffer[], offThread?: Compressor) {
    this.render = render;
    this.offThread = offThread;
  }

  /**
   * The whole body in `coding`, the answer's head then `tail`, as chunks to write in turn. The body of the
   * last tail is kept per coding: the tail changes once a second, and until then an answer is the same bytes.
   * Compressed, it is kept joined (a few kB made once a second, then one chunk per request); as is, it stays
   * the kept head and the tail (joining would copy the 57 kB head every second, for every answer asked).
   */
  body(answer: Answer, coding: Coding, tail: string): Buffer[] {
    let entry = this.entries.get(answer);
    if (!entry) {
      entry = { parts: this.render(answer), encoded: {} };
      this.entries.set(answer, entry);
    }
    let encoded = entry.encoded[coding];
    if (!encoded) {
      const head = encodeHead(coding === 'identity' ? kept(entry.parts) : this.gather(entry.parts), coding);
      encoded = { head, tail, body: finished(head, tail) };
      entry.encoded[coding] = encoded;
    } else if (encoded.tail !== tail) {
      encoded.tail = tail;
      encoded.body = finished(encoded.head, tail);
    }
    return encoded.body;
  }

  /**
   * The body of an answer that is not kept (a query asked once), made for this request. Compressed, it is
   * young garbage, compressed by `offThread` when there is one. As is, it is gathered in a send buffer (one
   * write rather than a chunk per node), to be given back with `sent` once written: a 57 kB buffer per answer
   * is memory outside the heap that V8 counts, and its count alone started a full collection every half second.
   */
  async once(answer: Answer, coding: Coding, tail: string): Promise<{ chunks: Buffer[]; sent?: () => void }> {
    const parts = this.render(answer);
    const tailBytes = Buffer.from(tail);
    let length = 0;
    for (const part of parts) length += part.length;
    if (coding === 'identity') {
      const buffer = this.sendBuffers.take(length + tailBytes.length);
      gatherInto(parts, buffer);
      tailBytes.copy(buffer, length);
      return { chunks: [buffer.subarray(0, length + tailBytes.length)], sent: () => this.sendBuffers.give(buffer) };
    }
    if (!this.offThread) return { chunks: encodeHead(this.gather(parts), coding, false).finish(tailBytes) };
    const head = new Uint8Array(length);
    gatherInto(parts, head);
    const { start, crc } = await this.offThread.compress(head, coding);
    if (coding === 'br') return { chunks: brotliFinisher(start).finish(tailBytes) };
    return { chunks: [GZIP_HEADER, ...gzipFinisher(start, crc, length).finish(tailBytes)] };
  }

  /** The parts one after another in the scratch buffer, valid until the next call. */
  private gather(parts: readonly Buffer[]): Buffer {
    let length = 0;
    for (const part of parts) length += part.length;
    if (length > this.scratch.length) this.scratch = Buffer.allocUnsafe(2 ** Math.ceil(Math.log2(length)));
    let offset = 0;
    for (const part of parts) offset += part.copy(this.scratch, offset);
    return this.scratch.subarray(0, length);
  }
}

function gatherInto(parts: readonly Buffer[], into: Uint8Array): void {
  let offset = 0;
  for (const part of parts) {
    into.set(part, offset);
    offset += part.length;
  }
}

/**
 * Buffers for answers sent once, each back in the pool when its answer is written. About as many are out
 * as answers are being written at once; free ones are kept up to MAX_FREE_BYTES (a few large answers, e.g.
 * limit=1000, must not pin their buffers for good), past that one given back is left to the collector.
 */
class SendBuffers {
  private static readonly MAX_FREE_BYTES = 8 * 1024 * 1024;
  private readonly free: Buffer[] = [];
  private freeBytes = 0;

  take(length: number): Buffer {
    for (let i = this.free.length - 1; i >= 0; i--) {
      const buffer = this.free[i]!;
      if (buffer.length >= length) {
        this.free[i] = this.free[this.free.length - 1]!;
        this.free.pop();
        this.freeBytes -= buffer.length;
        return buffer;
      }
    }
    // a power of two from 64 kB: answers of one query size share buffers
    return Buffer.allocUnsafeSlow(Math.max(64 * 1024, 2 ** Math.ceil(Math.log2(length))));
  }

  give(buffer: Buffer): void {
    if (this.freeBytes + buffer.length > SendBuffers.MAX_FREE_BYTES) return;
    this.free.push(buffer);
    this.freeBytes += buffer.length;
  }
}
