import { Worker } from 'node:worker_threads';
import zlib from 'node:zlib';
import { brotliOptions, GZIP_OPTIONS, type CompressedStart, type Compressor } from './encoded-head.ts';

/**
 * The worker's code, plain JavaScript given as text (the same from the .ts sources and from dist/). It
 * compresses with the options this thread uses (encoded-head.ts), so its bytes are the ones this thread
 * would make.
 */
const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const zlib = require('node:zlib');
const SIZE_HINT = zlib.constants.BROTLI_PARAM_SIZE_HINT;
parentPort.on('message', ({ id, coding, head }) => {
  try {
    const bytes = Buffer.from(head);
    let out;
    let crc = 0;
    if (coding === 'gzip') {
      out = zlib.deflateRawSync(bytes, workerData.gzip);
      crc = zlib.crc32(bytes);
    } else {
      out = zlib.brotliCompressSync(bytes, { ...workerData.brotli, params: { ...workerData.brotli.params, [SIZE_HINT]: bytes.length } });
    }
    const start = new Uint8Array(out.length);
    start.set(out);
    parentPort.postMessage({ id, start: start.buffer, crc }, [start.buffer]);
  } catch (error) {
    parentPort.postMessage({ id, error: String(error && error.message || error) });
  }
});
`;

interface Pending {
  resolve(result: CompressedStart): void;
  reject(error: Error): void;
}

/**
 * Compresses heads on a thread of its own, for answers made for one request (a cache miss of a one-off
 * query). Each sync compression creates a zlib or brotli engine, and on the server's thread, whose heap
 * holds the 50,000-offer snapshots (80 MB), those engines started a full collection every second or two
 * under a stream of compressed misses (15-100 ms pauses, measured with --trace-gc); the worker's heap is
 * tiny and its collections pause no request. The server's thread also gets the compression's time back
 * (80-115 µs a miss) for parsing and answering. Should the worker fail, heads are compressed here again.
 */
export class CompressionWorker implements Compressor {
  private worker: Worker | null = null;
  private failed = false;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  /** The head's compressed start; `head` is handed over (its memory moves to the worker). */
  compress(head: Uint8Array<ArrayBuffer>, coding: 'gzip' | 'br'): Promise<CompressedStart> {
    const worker = this.started();
    if (!worker) return Promise.resolve(compressHere(Buffer.from(head.buffer, head.byteOffset, head.byteLength), coding));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, coding, head: head.buffer }, [head.buffer]);
    });
  }

  private started(): Worker | null {
    if (this.worker || this.failed) return this.worker;
    const brotli = brotliOptions(0);
    const worker = new Worker(SOURCE, { eval: true, workerData: { gzip: GZIP_OPTIONS, brotli } });
    // the worker never keeps the process alive: a server that closes exits as before
    worker.unref();
    worker.on('message', ({ id, start, crc, error }: { id: number; start?: ArrayBuffer; crc: number; error?: string }) => {
      const pending = this.pending.get(id);
      if (!pending) return;
      this.pending.delete(id);
      if (error !== undefined || !start) pending.reject(new Error(`compression failed: ${error ?? 'no output'}`));
      else pending.resolve({ start: Buffer.from(start), crc });
    });
    const fail = (error: Error) => {
      this.failed = true;
      this.worker = null;
      for (const pending of this.pending.values()) pending.reject(error);
      this.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the compression worker exited with code ${code}`)));
    this.worker = worker;
    return worker;
  }
}

/** What the worker does, done on this thread. */
function compressHere(head: Buffer, coding: 'gzip' | 'br'): CompressedStart {
  return coding === 'gzip'
    ? { start: zlib.deflateRawSync(head, GZIP_OPTIONS), crc: zlib.crc32(head) }
    : { start: zlib.brotliCompressSync(head, brotliOptions(head.length)), crc: 0 };
}
