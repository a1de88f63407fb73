'use strict';
// autocannon's setupRequest for bench/metering: CommonJS, because autocannon require()s it in its worker thread.
//
// Each connection takes the next bearer of BENCH_METERING_TOKENS (one per tenant, or one for all) and posts
// usage records of gpu_seconds with changing quantities and references, each a new record (no idempotency key).

const TOKENS = JSON.parse(process.env.BENCH_METERING_TOKENS || '[]');
let nextToken = 0;
let serial = 0;

function setupRequest(request, context) {
  if (context.token === undefined) context.token = TOKENS[nextToken++ % TOKENS.length];
  serial++;
  request.method = 'POST';
  request.headers = { ...request.headers, 'content-type': 'application/json', authorization: `Bearer ${context.token}` };
  request.body = JSON.stringify({ resource_kind: 'gpu_seconds', quantity: `${1 + (serial % 97)}.25`, reference: `job-${serial}` });
  return request;
}

module.exports = setupRequest;
