import type { Metric, MetricValueWithName } from 'prom-client';

type Labels = { operation: string; method: string; status_class: string };

/** One series: its labels, and its requests, their durations' sum and their count per bucket (not cumulative; the last past every bound). */
interface Series {
  labels: Labels;
  count: number;
  sum: number;
  buckets: number[];
}

/**
 * What a prom-client registry reads of a metric: a name, and its values when collected (prom-client's own
 * declaration of `type` is a numeric enum, while its code reads and writes these strings).
 */
interface CollectedMetric {
  name: string;
  get(): Promise<{ name: string; help: string; type: 'counter' | 'histogram'; aggregator: 'sum'; values: Array<MetricValueWithName<string>> }>;
  reset(): void;
}

/**
 * The request counter and duration histogram, by operation, method and status class. prom-client's labelled
 * metrics hash and validate their labels on every observation, even through a child resolved once (about
 * 2 µs a request, a tenth of what a bare Koa answer costs): here a request adds to plain numbers of its
 * series, and the two metrics are made of them when the registry is read, in prom-client's format (so the
 * exposition, and the primary's aggregation of workers' figures, are prom-client's own).
 */
export class RequestTallies {
  private readonly series = new Map<string, Series>();

  constructor(
    private readonly counterName: string,
    private readonly counterHelp: string,
    private readonly histogramName: string,
    private readonly histogramHelp: string,
    private readonly bounds: readonly number[],
  ) {}

  observe(operation: string, method: string, statusClass: string, seconds: number): void {
    const key = `${operation} ${method} ${statusClass}`;
    let series = this.series.get(key);
    if (!series) {
      series = { labels: { operation, method, status_class: statusClass }, count: 0, sum: 0, buckets: new Array<number>(this.bounds.length + 1).fill(0) };
      this.series.set(key, series);
    }
    series.count += 1;
    series.sum += seconds;
    let bucket = 0;
    while (bucket < this.bounds.length && seconds > this.bounds[bucket]!) bucket += 1;
    series.buckets[bucket]! += 1;
  }

  /** The two metrics, to register with a prom-client registry. */
  metrics(): Metric[] {
    const all = () => [...this.series.values()];
    const metric = (name: string, help: string, type: 'counter' | 'histogram', values: () => Array<MetricValueWithName<string>>): CollectedMetric => ({
      name,
      get: () => Promise.resolve({ name, help, type, aggregator: 'sum' as const, values: values() }),
      // the two metrics are made of the same series: resetting either resets both
      reset: () => this.series.clear(),
    });
    const metrics = [
      metric(this.counterName, this.counterHelp, 'counter', () => all().map((series) => ({ labels: series.labels, value: series.count, metricName: this.counterName }))),
      metric(this.histogramName, this.histogramHelp, 'histogram', () => all().flatMap((series) => this.histogramValues(series))),
    ];
    // prom-client's registry takes any object with a name and get(); its types name only its own classes.
    // Written for the Prometheus text format the service serves (the registry's default): in prom-client's
    // OpenMetrics mode, which renames its own counters, this counter would come out as `..._total_total`.
    return metrics as unknown as Metric[];
  }

  /** A series as prom-client's Histogram exports one: cumulative buckets (le), +Inf, _sum, _count. */
  private histogramValues(series: Series): Array<MetricValueWithName<string>> {
    const bucketName = `${this.histogramName}_bucket`;
    const values: Array<MetricValueWithName<string>> = [];
    let cumulative = 0;
    for (const [i, bound] of this.bounds.entries()) {
      cumulative += series.buckets[i]!;
      values.push({ labels: { le: bound, ...series.labels }, value: cumulative, metricName: bucketName });
    }
    values.push(
      { labels: { le: '+Inf', ...series.labels }, value: series.count, metricName: bucketName },
      { labels: series.labels, value: series.sum, metricName: `${this.histogramName}_sum` },
      { labels: series.labels, value: series.count, metricName: `${this.histogramName}_count` },
    );
    return values;
  }
}
