'use strict';
// autocannon's setupRequest for bench/search: CommonJS, because autocannon require()s it in its worker thread.
//
// 5,000 search queries, each a different filter: per-GPU ceilings of whole cents from $0.50 to $50.49
// (the service floors a ceiling to whole cents, so finer steps would repeat filters). autocannon walks a
// `requests` list once per connection, so 32 connections would ask the same query at nearly the same time
// and all but the first would hit the cache; instead every request of the worker takes the next query from
// one counter. The answer cache holds 512 entries, so each query has left it before it comes round again:
// every request is a cache miss.

const PATHS = Array.from({ length: 5_000 }, (_, i) => `/v1/gpus?min_vram_gb=16&max_price_per_gpu_hour=${(0.5 + i / 100).toFixed(2)}`);

let next = 0;

function setupRequest(request) {
  request.path = PATHS[next];
  next = (next + 1) % PATHS.length;
  return request;
}

module.exports = setupRequest;
module.exports.PATHS = PATHS;
