import { createServer, type Server } from 'node:http';
import type { Context } from 'koa';
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Pools } from '../db/pools.js';
import { RequestTallies } from './request-tallies.js';
import type { TradingActivity, TradingTally } from '../domain/trading/transaction.js';

/** The Prometheus text format's content type, as prom-client writes it. */
export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const BATCH_SIZE_BUCKETS = [1, 2, 4, 8, 16, 32];

/** The knex pool (tarn) figures the gauges read. */
interface TarnPool {
  max: number;
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
}

/** The figures of one service process (its own registry: tests run several services in one process). */
export class ServiceMetrics implements TradingActivity {
  readonly registry = new Registry();
  private readonly requests = new RequestTallies(
    'dots_http_requests_total',
    'HTTP requests answered, by operationId (unmatched: no operation), method and status class.',
    'dots_http_request_duration_seconds',
    'Time from a request to its answer being ready, by operationId, method and status class.',
    DURATION_BUCKETS,
  );
  private readonly placements: Counter;
  private readonly refusedPlacements: Counter;
  private readonly batchSizes: Histogram;
  private readonly batchSeconds: Histogram;
  private readonly trades: Counter;
  private readonly cancels: Counter<'reason'>;
  readonly wsMessages: Counter;
  readonly wsSlowConsumers: Counter;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    for (const metric of this.requests.metrics()) this.registry.registerMetric(metric);
    this.placements = new Counter({ name: 'dots_order_placements_total', help: 'Orders placed (committed).', registers });
    this.refusedPlacements = new Counter({ name: 'dots_order_placements_refused_total', help: 'Placements refused by a trading rule (nothing placed).', registers });
    this.batchSizes = new Histogram({ name: 'dots_order_placement_batch_size', help: 'Placements committed together in one transaction (group commit).', buckets: BATCH_SIZE_BUCKETS, registers });
    this.batchSeconds = new Histogram({ name: 'dots_order_placement_batch_duration_seconds', help: 'Time of a group commit of placements, its transaction included.', buckets: DURATION_BUCKETS, registers });
    this.trades = new Counter({ name: 'dots_trades_total', help: 'Trades committed.', registers });
    this.cancels = new Counter({ name: 'dots_order_cancels_total', help: 'Orders cancelled, by reason (requested, expired: past expiration_ts, heartbeat: order session expired, self_trade, market_closed, market_resolved).', labelNames: ['reason'], registers });
    this.wsMessages = new Counter({ name: 'dots_ws_messages_sent_total', help: 'Real-time feed messages sent.', registers });
    this.wsSlowConsumers = new Counter({ name: 'dots_ws_slow_consumers_dropped_total', help: 'Real-time connections cut off for not reading their messages fast enough.', registers });
  }

  /** Database pool gauges, read at each scrape. */
  watchPools(pools: Pools): void {
    const tarn = (name: keyof Pools) => (pools[name] as unknown as { client: { pool?: TarnPool } }).client.pool;
    const names = Object.keys(pools) as Array<keyof Pools>;
    const gauge = (name: string, help: string, read: (pool: TarnPool) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['pool'],
        registers: [this.registry],
        collect() {
          for (const pool of names) {
            const figures = tarn(pool);
            if (figures) this.set({ pool }, read(figures));
          }
        },
      });
    gauge('dots_db_pool_size', 'Connections a pool may open.', (pool) => pool.max);
    gauge('dots_db_pool_in_use', 'Connections of a pool in use.', (pool) => pool.numUsed());
    gauge('dots_db_pool_idle', 'Open connections of a pool not in use.', (pool) => pool.numFree());
    gauge('dots_db_pool_waiting', 'Queries waiting for a connection of a pool.', (pool) => pool.numPendingAcquires());
  }

  /** Real-time feed gauges, read at each scrape. */
  watchRealtime(read: { connections: () => number; subscriptions: () => number }): void {
    const registers = [this.registry];
    new Gauge({ name: 'dots_ws_connections', help: 'Open real-time (WebSocket) connections.', registers, collect() { this.set(read.connections()); } });
    new Gauge({ name: 'dots_ws_subscriptions', help: 'Real-time subscriptions of the open connections.', registers, collect() { this.set(read.subscriptions()); } });
  }

  /** One answered request (called once the response is ready). */
  observeRequest(ctx: Context, ms: number): void {
    const operation = (ctx.state.operationId as string | undefined) ?? 'unmatched';
    const method = ctx.request.method;
    const status = ctx.response.status;
    this.requests.observe(operation, method, STATUS_CLASSES[Math.floor(status / 100) - 1] ?? '5xx', ms / 1000);
  }

  placed(asked: number, placed: number, seconds: number): void {
    this.placements.inc(placed);
    if (asked > placed) this.refusedPlacements.inc(asked - placed);
    this.batchSizes.observe(asked);
    this.batchSeconds.observe(seconds);
  }

  committed(tally: TradingTally): void {
    if (tally.trades > 0) this.trades.inc(tally.trades);
    for (const [reason, count] of Object.entries(tally.cancels)) this.cancels.inc({ reason }, count);
  }

  /** Makes this registry the one the primary collects from, in a worker of WEB_CONCURRENCY > 1. */
  reportToPrimary(): void {
    // constructing one installs prom-client's answer to the primary's requests in this worker
    new AggregatorRegistry();
    AggregatorRegistry.setRegistries([this.registry]);
  }
}

/** A listener of its own serving GET /metrics (METRICS_PORT): the service's figures, or every worker's in the primary. */
export async function serveMetrics(host: string, port: number, collect: () => Promise<string>, onError: (error: unknown) => void): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: { code: 'not_found', message: 'metrics are at GET /metrics' } }));
      return;
    }
    collect().then(
      (text) => res.writeHead(200, { 'Content-Type': METRICS_CONTENT_TYPE, 'Cache-Control': 'no-store' }).end(text),
      (error: unknown) => {
        onError(error);
        res.writeHead(503, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: { code: 'unavailable', message: 'metrics could not be collected' } }));
      },
    );
  });
  server.listen(port, host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  return { server, url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}/metrics` };
}

/** The primary's view of every worker's figures (prom-client asks each over the cluster's IPC channel). */
export function clusterMetrics(): () => Promise<string> {
  const aggregator = new AggregatorRegistry();
  return () => aggregator.clusterMetrics();
}
