/**
 * npm run bench:ws: the real-time feed under load: BENCH_SUBSCRIBERS WebSocket subscribers (default 200) on
 * one market while orders are placed at BENCH_RATE per second (default 300) for BENCH_DURATION seconds
 * (default 20, after BENCH_WARMUP s, default 2, not measured).
 *
 * 1. Database: an embedded PostgreSQL under .data/bench-ws (git-ignored) on a free port, with a fresh
 *    database `bench_ws` each run; or BENCH_DATABASE_URL (used as is; tickers carry a unique suffix).
 * 2. The service as deployed, `node dist/main.js` (bench/lib.ts startServiceProcess: built first if stale), in
 *    a process of its own so that its memory is its own, on a free port of 127.0.0.1, LOG_LEVEL=warn. Market
 *    and accounts are created through the API.
 * 3. Subscribers: in BENCH_WORKERS worker threads (default 2), each a WebSocket connection that subscribes to
 *    BENCH_CHANNELS (default `orderbook_delta,trade`) of the market. For every order-book delta and trade it
 *    receives, the delay is the time of receipt minus the message's `ts`: the time the trading transaction
 *    wrote its outbox record, just before its commit (so the delay slightly overstates commit-to-delivery).
 *    Every subscription's `seq` is checked for gaps.
 * 4. Load: open loop, one order every 1/BENCH_RATE s (at most 64 in flight), from this process's main
 *    thread: a maker's resting bid (buy YES at 0.01..0.30) and a taker's IOC buy of NO at 0.99 alternately,
 *    so that half the orders rest and half trade (one trade, and the maker's level shrinks).
 *
 * Prints the delay's p50/p90/p99/max, messages delivered per second, orders per second achieved (placements
 * on one market are serialised by its row lock: on a small machine the offered rate may not be reached,
 * which the output says), the service's resident memory (before the subscribers, with them, and its peak),
 * its CPU and the machine's, and whether the target (p99 < 50 ms, no gap, no failed order) was met; exit
 * code 1 when it was missed.
 */
import http from 'node:http';
import os from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../src/db/embedded.js';
import { startServiceProcess } from './lib.js';
import { machineCpu, memoryOf, processesCpu } from './proc.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DATA_DIR = path.join(root, '.data/bench-ws');
const DATABASE = 'bench_ws';

const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 200);
const RATE = Number(process.env.BENCH_RATE ?? 300);
const DURATION = Number(process.env.BENCH_DURATION ?? 20);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const CHANNELS = (process.env.BENCH_CHANNELS ?? 'orderbook_delta,trade').split(',').map((c) => c.trim()).filter(Boolean);
const MAX_IN_FLIGHT = 64;
const TARGET_P99_MS = 50;
const ADMIN = { email: 'bench-ws-admin@dots.local', password: 'bench-ws-password' };

for (const [name, value] of Object.entries({ SUBSCRIBERS, RATE, DURATION, WORKERS })) {
  if (!Number.isFinite(value) || value <= 0) throw new Error(`BENCH_${name} must be a positive number`);
}

const log = (line: string) => console.log(`bench:ws: ${line}`);

// --- subscribers (worker threads; plain JavaScript so that they need no loader)

const SUBSCRIBER_SOURCE = String.raw`
const { parentPort, workerData } = require('node:worker_threads');
const WebSocket = require(workerData.wsPath);

const sockets = [];
let measuring = false;
const delays = [];
let messages = 0;
let gaps = 0;
let errors = [];

function connect(i) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(workerData.url);
    const seqs = new Map();
    let pending = workerData.channels.length;
    ws.on('message', (data) => {
      const text = data.toString();
      const m = JSON.parse(text);
      if (m.type === 'subscribed') {
        seqs.set(m.msg.sid, 0);
        if (--pending === 0) resolve();
        return;
      }
      if (m.type === 'error') { errors.push(text); return; }
      if (m.seq !== undefined) {
        const last = seqs.get(m.sid) || 0;
        if (m.seq !== last + 1) gaps++;
        seqs.set(m.sid, m.seq);
      }
      if (m.type === 'orderbook_delta' || m.type === 'trade') {
        const delay = Date.now() - Date.parse(m.msg.ts);
        if (measuring) { delays.push(delay); messages++; }
      }
    });
    ws.on('open', () => ws.send(JSON.stringify({ id: 1, cmd: 'subscribe', params: { channels: workerData.channels, market_tickers: [workerData.ticker] } })));
    ws.on('error', reject);
    ws.on('close', (code) => { if (!ws.closedByUs) errors.push('closed ' + code); });
    sockets.push(ws);
  });
}

parentPort.on('message', async (command) => {
  try {
    if (command === 'connect') {
      for (let i = 0; i < workerData.count; i++) await connect(i);
      parentPort.postMessage({ ok: true });
    } else if (command === 'measure') {
      measuring = true;
      parentPort.postMessage({ ok: true });
    } else if (command === 'stop') {
      measuring = false;
      for (const ws of sockets) { ws.closedByUs = true; ws.close(); }
      parentPort.postMessage({ ok: true, delays, messages, gaps, errors: errors.slice(0, 5), errorCount: errors.length });
    }
  } catch (error) {
    parentPort.postMessage({ ok: false, error: String(error && error.stack || error) });
  }
});
`;

class Subscribers {
  readonly #worker: Worker;

  constructor(url: string, ticker: string, count: number) {
    const wsPath = createRequire(import.meta.url).resolve('ws');
    this.#worker = new Worker(SUBSCRIBER_SOURCE, { eval: true, workerData: { url, ticker, count, channels: CHANNELS, wsPath } });
  }

  call<T = { ok: true }>(command: string): Promise<T> {
    return new Promise((resolve, reject) => {
      this.#worker.once('message', (message: { ok: boolean; error?: string }) => (message.ok ? resolve(message as T) : reject(new Error(message.error))));
      this.#worker.once('error', reject);
      this.#worker.postMessage(command);
    });
  }

  terminate(): Promise<number> {
    return this.#worker.terminate();
  }
}

// --- HTTP

const agent = new http.Agent({ keepAlive: true, maxSockets: MAX_IN_FLIGHT });

function request(port: number, method: string, urlPath: string, body?: unknown, token?: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (payload) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(payload.length);
    }
    const r = http.request({ host: '127.0.0.1', port, method, path: urlPath, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        resolve({ status: res.statusCode ?? 0, body: text && res.headers['content-type']?.startsWith('application/json') ? JSON.parse(text) : text });
      });
    });
    r.on('error', reject);
    r.end(payload);
  });
}

async function must(port: number, method: string, urlPath: string, body?: unknown, token?: string): Promise<any> {
  const response = await request(port, method, urlPath, body, token);
  if (response.status >= 300) throw new Error(`${method} ${urlPath}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

// --- the service's process

/** What /proc says (bench:ws runs on Linux only). */
function fromProc<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('bench:ws reads the service\'s memory and CPU time from /proc, which is missing here');
  return value;
}

function cpuSecondsOf(pid: number): number {
  const cpu = fromProc(processesCpu([pid]));
  return (cpu.user + cpu.sys) / 1000;
}

const percentile = (sorted: Float64Array, p: number) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!);

async function main(): Promise<void> {
  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = process.env.BENCH_DATABASE_URL;
  const suffix = Date.now().toString(36).toUpperCase();
  if (!databaseUrl) {
    embedded = await startEmbeddedPostgres({ dataDir: DATA_DIR });
    const admin = new pg.Client({ connectionString: embedded.url });
    await admin.connect();
    await admin.query(`drop database if exists ${DATABASE}`);
    await admin.query(`create database ${DATABASE}`);
    await admin.end();
    const url = new URL(embedded.url);
    url.pathname = `/${DATABASE}`;
    databaseUrl = url.toString();
  }
  const service = await startServiceProcess({
    databaseUrl,
    workers: 1,
    env: {
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
      STARTING_BALANCE: '100000000',
      // All the load comes from one address and one account: the per-client caps would refuse it.
      WS_MAX_CONNECTIONS_PER_ADDRESS: '100000',
      WS_SNAPSHOTS_PER_SEC: '1000000',
    },
  });
  const port = Number(new URL(service.url).port);
  const pid = service.pids()[0]!;
  const workers: Subscribers[] = [];
  try {
    const adminToken = (await must(port, 'POST', '/api/auth/login', ADMIN)).token as string;
    const series = `BWS${suffix}`;
    await must(port, 'POST', '/api/admin/series', { ticker: series, title: 'Bench ws', category: 'economics', frequency: 'daily' }, adminToken);
    await must(port, 'POST', '/api/admin/events', { event_ticker: `${series}-E`, series_ticker: series, title: 'Bench ws event', strike_date: '2031-01-01T00:00:00Z' }, adminToken);
    const ticker = `${series}-E-M1`;
    await must(port, 'POST', '/api/admin/markets', { ticker, event_ticker: `${series}-E`, title: 'Bench ws market' }, adminToken);
    const register = async (name: string) => (await must(port, 'POST', '/api/auth/register', { email: `${name}-${suffix.toLowerCase()}@bench.local`, password: 'bench-ws-password' })).token as string;
    const [maker, taker] = [await register('maker'), await register('taker')];

    const before = fromProc(memoryOf(pid));
    log(`service pid ${pid} on port ${port}, market ${ticker}; resident memory before subscribers ${before.rssMiB.toFixed(1)} MiB`);
    const url = `ws://127.0.0.1:${port}/ws`;
    for (let w = 0; w < WORKERS; w += 1) {
      const count = Math.floor(SUBSCRIBERS / WORKERS) + (w < SUBSCRIBERS % WORKERS ? 1 : 0);
      workers.push(new Subscribers(url, ticker, count));
    }
    await Promise.all(workers.map((w) => w.call('connect')));
    const connected = fromProc(memoryOf(pid));
    log(`${SUBSCRIBERS} subscribers connected (channels ${CHANNELS.join(', ')}), ${WORKERS} worker threads; service memory ${connected.rssMiB.toFixed(1)} MiB`);

    // Open loop at RATE orders per second.
    let sent = 0;
    let inFlight = 0;
    let skipped = 0;
    const failures: string[] = [];
    let measuredOrders = 0;
    let measuring = false;
    const order = (i: number) =>
      i % 2 === 0
        ? { body: { ticker, side: 'yes', action: 'buy', price: `0.${String(1 + ((i / 2) % 30)).padStart(2, '0')}`, count: '1' }, token: maker }
        : { body: { ticker, side: 'no', action: 'buy', price: '0.99', count: '1', time_in_force: 'IOC' }, token: taker };
    const fire = () => {
      if (inFlight >= MAX_IN_FLIGHT) {
        skipped += 1;
        return;
      }
      const { body, token } = order(sent);
      sent += 1;
      inFlight += 1;
      const counted = measuring;
      request(port, 'POST', '/api/portfolio/orders', body, token)
        .then((r) => {
          if (r.status !== 201 && failures.length < 5) failures.push(`${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
          else if (r.status !== 201) failures.push('');
          else if (counted) measuredOrders += 1;
        })
        .catch((error: unknown) => failures.push(String(error)))
        .finally(() => {
          inFlight -= 1;
        });
    };
    const t0 = performance.now();
    const interval = 1000 / RATE;
    let next = 0;
    let memoryPeak = connected.rssMiB;
    let cpuStart = 0;
    let machineStart = { busy: 0, total: 0 };
    let measureStart = 0;
    const memoryTimer = setInterval(() => {
      memoryPeak = Math.max(memoryPeak, memoryOf(pid)?.rssMiB ?? 0);
    }, 500);
    await new Promise<void>((resolve) => {
      const tick = () => {
        const now = performance.now() - t0;
        if (!measuring && now >= WARMUP * 1000) {
          measuring = true;
          measureStart = performance.now();
          void Promise.all(workers.map((w) => w.call('measure')));
          cpuStart = cpuSecondsOf(pid);
          machineStart = fromProc(machineCpu());
        }
        if (now >= (WARMUP + DURATION) * 1000) return resolve();
        while (next * interval <= now) {
          fire();
          next += 1;
        }
        setTimeout(tick, 1);
      };
      tick();
    });
    const measuredSecs = (performance.now() - measureStart) / 1000;
    const cpuEnd = cpuSecondsOf(pid);
    const machineEnd = fromProc(machineCpu());
    while (inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 10));
    // Let the last messages arrive.
    await new Promise((resolve) => setTimeout(resolve, 500));
    clearInterval(memoryTimer);
    const after = fromProc(memoryOf(pid));
    const results = await Promise.all(workers.map((w) => w.call<{ ok: true; delays: number[]; messages: number; gaps: number; errors: string[]; errorCount: number }>('stop')));

    const all = new Float64Array(results.reduce((n, r) => n + r.delays.length, 0));
    let offset = 0;
    for (const r of results) {
      all.set(r.delays, offset);
      offset += r.delays.length;
    }
    all.sort();
    const messages = results.reduce((n, r) => n + r.messages, 0);
    const gaps = results.reduce((n, r) => n + r.gaps, 0);
    const subscriberErrors = results.reduce((n, r) => n + r.errorCount, 0);
    const p50 = percentile(all, 50);
    const p90 = percentile(all, 90);
    const p99 = percentile(all, 99);
    const max = all.length ? all[all.length - 1]! : NaN;

    log(`orders: ${sent} sent, ${(measuredOrders / measuredSecs).toFixed(0)}/s answered 201 while measured (target rate ${RATE}/s), ${failures.length} failed, ${skipped} skipped (${MAX_IN_FLIGHT} in flight)`);
    log(`delivered: ${messages} order-book deltas and trades measured (${(messages / measuredSecs).toFixed(0)}/s over ${SUBSCRIBERS} subscribers), seq gaps ${gaps}, subscriber errors ${subscriberErrors}`);
    log(`commit -> delivery delay: p50 ${p50.toFixed(1)} ms, p90 ${p90.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${max.toFixed(1)} ms`);
    log(`service memory: ${before.rssMiB.toFixed(1)} MiB before subscribers, ${connected.rssMiB.toFixed(1)} MiB with them, ${after.rssMiB.toFixed(1)} MiB after the run, peak sampled ${memoryPeak.toFixed(1)} MiB (VmHWM ${after.peakMiB.toFixed(1)} MiB)`);
    const machineBusy = (100 * (machineEnd.busy - machineStart.busy)) / Math.max(1, machineEnd.total - machineStart.total);
    log(`CPU while measured: the service ${(((cpuEnd - cpuStart) / measuredSecs) * 100).toFixed(0)}% of one core; the whole machine (${os.cpus().length} cores: PostgreSQL, the service, these subscribers and the load) ${machineBusy.toFixed(0)}% busy`);
    if (measuredOrders / measuredSecs < RATE * 0.9) {
      log(`the offered ${RATE} orders/s were not reached: placements on one market are serialised by its row lock, and share this machine's CPU with the subscribers and PostgreSQL`);
    }
    if (failures.length > 0) log(`failures: ${failures.filter(Boolean).join(' | ')}`);
    for (const r of results) if (r.errors.length > 0) log(`subscriber errors: ${r.errors.join(' | ')}`);
    const met = p99 < TARGET_P99_MS && gaps === 0 && failures.length === 0 && subscriberErrors === 0 && messages > 0;
    log(`target p99 < ${TARGET_P99_MS} ms with no gap and no failure: ${met ? 'met' : 'missed'}`);
    process.exitCode = met ? 0 : 1;
  } finally {
    for (const w of workers) await w.terminate();
    agent.destroy();
    await service.stop();
    await embedded?.stop();
  }
}

main().catch((error: unknown) => {
  console.error('bench:ws failed:', error);
  process.exit(1);
});
