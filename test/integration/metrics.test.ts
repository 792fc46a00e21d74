import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MarketFactory } from '../support/markets.js';
import { FeedClient } from '../support/realtime.js';
import { ProcessCluster, workersThatServed } from '../support/processes.js';
import { ApiClient, createTestDatabase, TestService } from '../support/service.js';

const ADMIN = { email: 'metrics-admin@example.com', password: 'metrics-admin-password' };
const METRICS_TOKEN = 'metrics-token-0123456789';

/** The value of one sample of a Prometheus text exposition (0 when absent). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labelText = line.startsWith(`${name}{`) ? line.slice(name.length + 1, line.indexOf('}')) : '';
    if (wanted.every((label) => labelText.split(',').includes(label))) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

async function scrape(url: string, token?: string): Promise<{ status: number; type: string | null; text: string }> {
  const response = await fetch(url, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
}

/** A GET on a connection of its own (so that the cluster spreads them over its workers). */
function getOnNewConnection(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    httpRequest(url, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    })
      .on('error', reject)
      .end();
  });
}

describe('metrics (one process)', () => {
  let service: TestService;
  let markets: MarketFactory;
  beforeAll(async () => {
    service = await TestService.start({ ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, METRICS_PORT: '0', METRICS_TOKEN });
    markets = await MarketFactory.create(service, ADMIN, 'MTRC');
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('counts placements, trades and cancels as done, with histograms of the operations used', async () => {
    const url = service.service.metricsUrl!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const before = (await scrape(url)).text;
    const { ticker } = await markets.newMarket();
    const yes = await service.register();
    const no = await service.register();
    const PAIRS = 5;
    for (let i = 0; i < PAIRS; i += 1) {
      expect((await service.post('/api/portfolio/orders', { ticker, side: 'yes', count: '1', price: '0.50' }, { token: yes.token })).status).toBe(201);
      const taker = await service.post('/api/portfolio/orders', { ticker, side: 'no', count: '1', price: '0.50' }, { token: no.token });
      expect(taker.body.order.fill_count).toBe('1');
    }
    const resting = await service.post('/api/portfolio/orders', { ticker, side: 'yes', count: '1', price: '0.10' }, { token: yes.token });
    expect((await service.delete(`/api/portfolio/orders/${resting.body.order.order_id}`, { token: yes.token })).status).toBe(200);

    const scraped = await scrape(url);
    expect(scraped.status).toBe(200);
    expect(scraped.type).toContain('text/plain');
    const after = scraped.text;
    const delta = (name: string, labels?: Record<string, string>) => sample(after, name, labels) - sample(before, name, labels);
    expect(delta('dots_order_placements_total')).toBe(2 * PAIRS + 1);
    expect(delta('dots_trades_total')).toBe(PAIRS);
    expect(delta('dots_order_cancels_total', { reason: 'requested' })).toBe(1);
    expect(delta('dots_order_placement_batch_size_sum')).toBe(2 * PAIRS + 1);
    const placeOrder = { operation: 'placeOrder', method: 'POST', status_class: '2xx' };
    expect(delta('dots_http_requests_total', placeOrder)).toBe(2 * PAIRS + 1);
    expect(delta('dots_http_request_duration_seconds_count', placeOrder)).toBe(2 * PAIRS + 1);
    expect(sample(after, 'dots_http_request_duration_seconds_bucket', { ...placeOrder, le: '+Inf' })).toBe(sample(after, 'dots_http_request_duration_seconds_count', placeOrder));
    expect(delta('dots_http_request_duration_seconds_count', { operation: 'cancelOrder', method: 'DELETE', status_class: '2xx' })).toBe(1);
    expect(delta('dots_http_requests_total', { operation: 'registerAccount', method: 'POST', status_class: '2xx' })).toBe(2);
    // The pools' figures move with the service's background work (rollups, expiry sweep), so they are checked
    // for what always holds: every pool has each figure, and its connections in use and idle fit in its size.
    for (const pool of ['db', 'plannedDb', 'publicSearchDb', 'catalogueSearchDb']) {
      const figure = (name: string) => {
        expect(after).toMatch(new RegExp(`^${name}\\{pool="${pool}"\\} \\d+$`, 'm'));
        return sample(after, name, { pool });
      };
      const size = figure('dots_db_pool_size');
      expect(size).toBeGreaterThan(0);
      expect(figure('dots_db_pool_in_use') + figure('dots_db_pool_idle')).toBeLessThanOrEqual(size);
      figure('dots_db_pool_waiting');
    }
    expect(after).toMatch(/^dots_ws_connections 0$/m);
    expect(after).toMatch(/^process_cpu_user_seconds_total /m);
  });

  it('counts real-time connections, subscriptions and the messages sent', async () => {
    const url = service.service.metricsUrl!;
    const before = (await scrape(url)).text;
    const { ticker } = await markets.newMarket();
    const feed = await FeedClient.connect(service.baseUrl);
    try {
      await feed.subscribe(['trade', 'ticker'], [ticker]);
      const during = (await scrape(url)).text;
      expect(sample(during, 'dots_ws_connections')).toBe(1);
      expect(sample(during, 'dots_ws_subscriptions')).toBe(2);
      expect(sample(during, 'dots_ws_messages_sent_total') - sample(before, 'dots_ws_messages_sent_total')).toBe(feed.messages.length);
      expect(feed.messages.length).toBeGreaterThanOrEqual(2);
      expect(feed.problems).toEqual([]);
    } finally {
      feed.close();
      await feed.closed;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    const after = (await scrape(url)).text;
    expect(sample(after, 'dots_ws_connections')).toBe(0);
    expect(sample(after, 'dots_ws_subscriptions')).toBe(0);
    expect(sample(after, 'dots_ws_slow_consumers_dropped_total')).toBe(0);
  });

  it('serves /metrics on the main port only with METRICS_TOKEN as a bearer token', async () => {
    expect((await scrape(`${service.baseUrl}/metrics`)).status).toBe(401);
    expect((await scrape(`${service.baseUrl}/metrics`, 'wrong-token-0123456789')).status).toBe(401);
    const granted = await scrape(`${service.baseUrl}/metrics`, METRICS_TOKEN);
    expect(granted.status).toBe(200);
    expect(granted.text).toContain('dots_http_requests_total');
  });

  it('is off without METRICS_PORT and METRICS_TOKEN: /metrics is 404 on the main port', async () => {
    const plain = await TestService.start();
    try {
      expect(plain.service.metrics).toBeUndefined();
      expect((await plain.get('/metrics')).status).toBe(404);
    } finally {
      await plain.stop();
    }
  });
});

describe('metrics of every worker (WEB_CONCURRENCY=2, served by the primary on METRICS_PORT)', () => {
  let cluster: ProcessCluster;
  beforeAll(async () => {
    cluster = new ProcessCluster(await createTestDatabase(), { METRICS_PORT: '0' }, 2);
  });
  afterAll(() => cluster?.killAll());

  it('sums the requests of both workers', async () => {
    const { process: started } = await cluster.start();
    const metricsUrl = /"url":"(http:\/\/[^"]+\/metrics)","msg":"metrics listening"/.exec(started.output())?.[1];
    expect(metricsUrl).toBeDefined();
    const REQUESTS = 40;
    for (let i = 0; i < REQUESTS; i += 1) expect(await getOnNewConnection(`${started.url}/livez`)).toBe(200);
    await new ApiClient(started.url).get('/readyz');
    // both workers answered some of them
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(workersThatServed(started.output()).size).toBe(2);
    const text = (await scrape(metricsUrl!)).text;
    expect(sample(text, 'dots_http_requests_total', { operation: 'getLiveness', method: 'GET', status_class: '2xx' })).toBe(REQUESTS);
    expect(sample(text, 'dots_http_request_duration_seconds_count', { operation: 'getLiveness' })).toBe(REQUESTS);
    expect(await cluster.stop(started)).toEqual([0]);
  }, 90_000);
});
