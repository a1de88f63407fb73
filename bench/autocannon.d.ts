/** The part of autocannon 9's programmatic API the benchmarks use; the package ships no types. */
declare module 'autocannon' {
  export interface Options {
    url: string;
    connections?: number;
    /** Seconds. */
    duration?: number;
    method?: string;
    headers?: Record<string, string>;
    /** Worker threads that fire the requests; 0 or absent runs them on the caller's thread. */
    workers?: number;
    /** Sent in turn on every connection. */
    requests?: {
      method?: string;
      path: string;
      /** With workers: the absolute path of a CommonJS module exporting (request, context) => request. */
      setupRequest?: string;
    }[];
  }

  /** hdr-histogram-percentiles-obj: the latency one is in milliseconds, recorded as integers. */
  export interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p90: number;
    p99: number;
    p99_9: number;
  }

  export interface Result {
    url: string;
    duration: number;
    requests: Histogram;
    latency: Histogram;
    throughput: Histogram;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    statusCodeStats: Record<string, { count: number }>;
  }

  /** Without a callback it answers a thenable that resolves with the result. */
  export default function autocannon(options: Options): Promise<Result>;
}
