import { describe, expect, it } from 'vitest';
import { PrometheusMetrics } from '../../adapters/metrics/prometheus-metrics.ts';
import { parseSamples, valueOf } from '../support/prometheus.ts';

describe('http request series', () => {
  it('renders counts, cumulative le buckets (a value on a bound counts in it), sums and counts per method, route and status', async () => {
    const metrics = new PrometheusMetrics({ defaultMetrics: false });
    for (const seconds of [0.0004, 0.0005, 0.0006, 0.003, 20]) metrics.httpRequest('GET', '/v1/gpus', 200, seconds);
    metrics.httpRequest('POST', '/v1/gpus', 404, 0.01);
    metrics.httpRequest('GET', '/v1/gpus', 404, 0.01);
    const samples = parseSamples(await metrics.render());
    const get = { method: 'GET', route: '/v1/gpus', status: '200' };
    expect(valueOf(samples, 'http_requests_total', get)).toBe(5);
    expect(valueOf(samples, 'http_requests_total', { route: '/v1/gpus' })).toBe(7);
    expect(valueOf(samples, 'http_requests_total', { method: 'POST', status: '404' })).toBe(1);
    const bucket = (le: string) => valueOf(samples, 'http_request_duration_seconds_bucket', { ...get, le });
    expect([bucket('0.0005'), bucket('0.001'), bucket('0.005'), bucket('10'), bucket('+Inf')]).toEqual([2, 3, 4, 4, 5]);
    expect(valueOf(samples, 'http_request_duration_seconds_sum', get)).toBeCloseTo(20.0045, 9);
    expect(valueOf(samples, 'http_request_duration_seconds_count', get)).toBe(5);
  });
});
