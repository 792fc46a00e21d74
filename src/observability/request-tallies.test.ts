import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { RequestTallies } from './request-tallies.js';

const BOUNDS = [0.001, 0.01, 0.1, 1];
const LABELS = ['operation', 'method', 'status_class'] as const;
const OBSERVED: Array<[string, string, string, number]> = [
  ['placeOrder', 'POST', '2xx', 0.0004],
  ['placeOrder', 'POST', '2xx', 0.001],
  ['placeOrder', 'POST', '2xx', 0.0011],
  ['placeOrder', 'POST', '4xx', 0.05],
  ['listEvents', 'GET', '2xx', 0.5],
  ['listEvents', 'GET', '2xx', 3],
  ['unmatched', 'PATCH', '4xx', 0.00001],
];

/** The tallies, and prom-client's own Counter and Histogram, each in a registry, given the same requests. */
function bothRegistries(observed = OBSERVED): { tallied: Registry; native: Registry } {
  const tallied = new Registry();
  const tallies = new RequestTallies('t_requests_total', 'Requests.', 't_request_seconds', 'Durations.', BOUNDS);
  for (const metric of tallies.metrics()) tallied.registerMetric(metric);
  const native = new Registry();
  const counter = new Counter({ name: 't_requests_total', help: 'Requests.', labelNames: LABELS, registers: [native] });
  const histogram = new Histogram({ name: 't_request_seconds', help: 'Durations.', labelNames: LABELS, buckets: BOUNDS, registers: [native] });
  for (const [operation, method, statusClass, seconds] of observed) {
    tallies.observe(operation, method, statusClass, seconds);
    const labels = { operation, method, status_class: statusClass };
    counter.inc(labels);
    histogram.observe(labels, seconds);
  }
  return { tallied, native };
}

describe('RequestTallies', () => {
  it("exposes exactly what prom-client's Counter and Histogram expose for the same requests", async () => {
    const { tallied, native } = bothRegistries();
    const text = await tallied.metrics();
    expect(text).toBe(await native.metrics());
    // a bound is inclusive (le): 0.001 counts in the first bucket, 0.0011 in the second
    expect(text).toContain('t_request_seconds_bucket{le="0.001",operation="placeOrder",method="POST",status_class="2xx"} 2');
    expect(text).toContain('t_request_seconds_bucket{le="0.01",operation="placeOrder",method="POST",status_class="2xx"} 3');
    expect(text).toContain('t_request_seconds_bucket{le="+Inf",operation="listEvents",method="GET",status_class="2xx"} 2');
    expect(text).toContain('t_requests_total{operation="placeOrder",method="POST",status_class="4xx"} 1');
  });

  it("is summed over workers by prom-client's cluster aggregation as its own metrics are", async () => {
    const first = bothRegistries();
    const second = bothRegistries(OBSERVED.slice(2));
    const aggregated = AggregatorRegistry.aggregate([await first.tallied.getMetricsAsJSON(), await second.tallied.getMetricsAsJSON()]);
    const expected = AggregatorRegistry.aggregate([await first.native.getMetricsAsJSON(), await second.native.getMetricsAsJSON()]);
    expect(await aggregated.metrics()).toBe(await expected.metrics());
    expect(await aggregated.metrics()).toContain('t_requests_total{operation="listEvents",method="GET",status_class="2xx"} 4');
  });

  it('starts again from nothing when the registry is reset', async () => {
    const { tallied } = bothRegistries();
    tallied.resetMetrics();
    expect(await tallied.metrics()).not.toContain('operation=');
  });
});
