/**
 * npm run bench:ws: the real-time feed under load (docs/performance.md): 200 WebSocket subscribers of one
 * market, in 2 worker threads (bench/ws-subscribers.ts), on the service as deployed (`node dist/main.js`, so
 * that its memory is its own), while this thread places orders at 300 per second for BENCH_DURATION s (default
 * 20, after 2 s not measured), open loop, at most 64 in flight: a maker's resting bid (YES at 0.01..0.30) and a
 * taker's IOC buy of NO at 0.99 in turn, so that half rest and half trade. The delay of each order-book delta
 * and trade is its receipt minus its `ts` (when the trading transaction wrote its outbox record, just before
 * its commit); every subscription's `seq` is checked for gaps. Prints the delay's percentiles, messages and
 * orders per second (placements on one market are serialised by its row lock: the offered rate may not be
 * reached, which the output says), the service's memory and CPU and the machine's; the target (p99 < 50 ms,
 * no gap, no failed order) missed, the exit code is 1.
 */
import http from 'node:http';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { benchDatabase, benchSeries, durationSetting, percentile, register, RUN, runBench, sleep, startServiceProcess, startWorker } from './lib.js';
import { send } from './orders-load.js';
import { machineCpu, memoryOf, processesCpu } from './proc.js';
import type { SubscribersCommand, SubscribersData, SubscribersResult } from './ws-subscribers.js';

const SUBSCRIBERS = 200;
const RATE = 300;
const DURATION = durationSetting(20);
const WARMUP = 2;
const WORKERS = 2;
const CHANNELS = ['orderbook_delta', 'trade'];
const MAX_IN_FLIGHT = 64;
const TARGET_P99_MS = 50;

const log = (line: string) => console.log(`bench:ws: ${line}`);

/** What /proc says (bench:ws runs on Linux only). */
function fromProc<T>(value: T | undefined): T {
  if (value === undefined) throw new Error("bench:ws reads the service's memory and CPU time from /proc, which is missing here");
  return value;
}

/** Places an order; answers undefined when it was accepted (201), else what went wrong. */
async function placeOrder(port: number, agent: http.Agent, body: Record<string, string>, token: string): Promise<string | undefined> {
  const { status, text } = await send(agent, port, { method: 'POST', path: '/api/portfolio/orders', token, body: JSON.stringify(body) });
  return status === 201 ? undefined : `${status} ${text.slice(0, 200)}`;
}

runBench('ws', async (defer) => {
  const database = await benchDatabase('bench-ws', 'bench_ws', defer);
  // All the load comes from one address and one account: the per-client caps would refuse it.
  const env = { WS_MAX_CONNECTIONS_PER_ADDRESS: '100000', WS_SNAPSHOTS_PER_SEC: '1000000' };
  const service = await startServiceProcess({ databaseUrl: database.url, workers: 1, env }, defer);
  const port = Number(new URL(service.url).port);
  const pid = service.pids()[0]!;
  const cpuSeconds = () => {
    const cpu = fromProc(processesCpu([pid]));
    return (cpu.user + cpu.sys) / 1000;
  };
  const ticker = await (await benchSeries(service.url, `BWS${RUN}`)).market('E');
  const maker = (await register(service.url, `maker-${RUN.toLowerCase()}@bench.local`)).token;
  const taker = (await register(service.url, `taker-${RUN.toLowerCase()}@bench.local`)).token;

  const before = fromProc(memoryOf(pid));
  log(`service pid ${pid} on port ${port}, market ${ticker}; resident memory before subscribers ${before.rssMiB.toFixed(1)} MiB`);
  const workers = Array.from({ length: WORKERS }, (_, w) => {
    const data: SubscribersData = { url: `ws://127.0.0.1:${port}/ws`, ticker, channels: CHANNELS, count: Math.floor(SUBSCRIBERS / WORKERS) + (w < SUBSCRIBERS % WORKERS ? 1 : 0) };
    return startWorker('./ws-subscribers.ts', defer, data);
  });
  const all = (command: SubscribersCommand) => Promise.all(workers.map((worker) => worker.ask<SubscribersResult>(command)));
  await all('connect');
  const connected = fromProc(memoryOf(pid));
  log(`${SUBSCRIBERS} subscribers connected (channels ${CHANNELS.join(', ')}), ${WORKERS} worker threads; service memory ${connected.rssMiB.toFixed(1)} MiB`);

  // Open loop at RATE orders per second.
  const agent = new http.Agent({ keepAlive: true, maxSockets: MAX_IN_FLIGHT });
  defer(() => Promise.resolve(agent.destroy()));
  const orders = { sent: 0, inFlight: 0, skipped: 0, measured: 0, failures: [] as string[] };
  let measuring = false;
  const fire = () => {
    if (orders.inFlight >= MAX_IN_FLIGHT) {
      orders.skipped += 1;
      return;
    }
    const i = orders.sent++;
    const counted = measuring;
    orders.inFlight += 1;
    void (i % 2 === 0
      ? placeOrder(port, agent, { ticker, side: 'yes', action: 'buy', price: `0.${String(1 + ((i / 2) % 30)).padStart(2, '0')}`, count: '1' }, maker)
      : placeOrder(port, agent, { ticker, side: 'no', action: 'buy', price: '0.99', count: '1', time_in_force: 'IOC' }, taker)
    ).then((failure) => {
      orders.inFlight -= 1;
      if (failure !== undefined) orders.failures.push(failure);
      else if (counted) orders.measured += 1;
    });
  };
  const t0 = performance.now();
  let next = 0;
  let memoryPeak = connected.rssMiB;
  let start = { at: 0, cpu: 0, machine: { busy: 0, total: 0 } };
  const memoryTimer = setInterval(() => {
    memoryPeak = Math.max(memoryPeak, memoryOf(pid)?.rssMiB ?? 0);
  }, 500);
  for (let now = 0; now < (WARMUP + DURATION) * 1000; now = performance.now() - t0) {
    if (!measuring && now >= WARMUP * 1000) {
      measuring = true;
      const at = performance.now();
      await all('measure');
      start = { at, cpu: cpuSeconds(), machine: fromProc(machineCpu()) };
    }
    for (; next * (1000 / RATE) <= now; next++) fire();
    await sleep(1);
  }
  const measuredSecs = (performance.now() - start.at) / 1000;
  const cpuEnd = cpuSeconds();
  const machineEnd = fromProc(machineCpu());
  while (orders.inFlight > 0) await sleep(10);
  // Let the last messages arrive.
  await sleep(500);
  clearInterval(memoryTimer);
  const after = fromProc(memoryOf(pid));
  const results = await all('stop');

  const delays = Float64Array.from(results.flatMap((r) => r.delays)).sort();
  const messages = delays.length;
  const gaps = results.reduce((n, r) => n + r.gaps, 0);
  const errors = results.flatMap((r) => r.errors);
  const [p50, p90, p99] = [50, 90, 99].map((p) => percentile(delays, p)) as [number, number, number];
  const max = delays.at(-1) ?? NaN;

  log(`orders: ${orders.sent} sent, ${(orders.measured / measuredSecs).toFixed(0)}/s answered 201 while measured (target rate ${RATE}/s), ${orders.failures.length} failed, ${orders.skipped} skipped (${MAX_IN_FLIGHT} in flight)`);
  log(`delivered: ${messages} order-book deltas and trades measured (${(messages / measuredSecs).toFixed(0)}/s over ${SUBSCRIBERS} subscribers), seq gaps ${gaps}, subscriber errors ${errors.length}`);
  log(`commit -> delivery delay: p50 ${p50.toFixed(1)} ms, p90 ${p90.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${max.toFixed(1)} ms`);
  log(`service memory: ${before.rssMiB.toFixed(1)} MiB before subscribers, ${connected.rssMiB.toFixed(1)} MiB with them, ${after.rssMiB.toFixed(1)} MiB after the run, peak sampled ${memoryPeak.toFixed(1)} MiB (VmHWM ${after.peakMiB.toFixed(1)} MiB)`);
  const machineBusy = (100 * (machineEnd.busy - start.machine.busy)) / Math.max(1, machineEnd.total - start.machine.total);
  log(`CPU while measured: the service ${(((cpuEnd - start.cpu) / measuredSecs) * 100).toFixed(0)}% of one core; the whole machine (${os.cpus().length} cores: PostgreSQL, the service, these subscribers and the load) ${machineBusy.toFixed(0)}% busy`);
  if (orders.measured / measuredSecs < RATE * 0.9) {
    log(`the offered ${RATE} orders/s were not reached: placements on one market are serialised by its row lock, and share this machine's CPU with the subscribers and PostgreSQL`);
  }
  if (orders.failures.length > 0) log(`failures: ${orders.failures.slice(0, 5).join(' | ')}`);
  if (errors.length > 0) log(`subscriber errors: ${errors.slice(0, 5).join(' | ')}`);
  const met = p99 < TARGET_P99_MS && gaps === 0 && orders.failures.length === 0 && errors.length === 0 && messages > 0;
  log(`target p99 < ${TARGET_P99_MS} ms with no gap and no failure: ${met ? 'met' : 'missed'}`);
  process.exitCode = met ? 0 : 1;
});
