/**
 * What the benchmarks share: their settings (docs/performance.md), their database, the service (in the bench's
 * process or as a process of its own, `node dist/main.js`), the API calls that set up markets and accounts, the
 * figures and the table, and the verdict on their targets.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type Koa from 'koa';
import pg from 'pg';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { findFreePort, startEmbeddedPostgres } from '../src/db/embedded.js';
import { createLogger } from '../src/logger.js';
import { startService, type RunningService } from '../src/server.js';
import { connectionsPerProcess, processTree } from './proc.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** BENCH_DURATION: seconds measured per row, a positive number; `fallback` when unset. */
export function durationSetting(fallback: number): number {
  const raw = process.env.BENCH_DURATION?.trim();
  const value = raw ? Number(raw) : fallback;
  if (!(value > 0) || !Number.isFinite(value)) refuse(`BENCH_DURATION must be a positive number of seconds, got '${raw}'`);
  return value;
}

/** BENCH_DATABASE_URL: a PostgreSQL database the bench may write to, instead of its embedded one. */
const DATABASE_URL = process.env.BENCH_DATABASE_URL?.trim() || undefined;
if (DATABASE_URL && !/^postgres(ql)?:\/\/./.test(DATABASE_URL)) refuse('BENCH_DATABASE_URL must be a postgres:// or postgresql:// URL');

export function refuse(message: string): never {
  console.error(`bench: ${message}`);
  process.exit(2);
}

/** Adds a step to run when the bench ends (stopping what it started). */
export type Defer = (step: () => Promise<unknown>) => void;

/** Runs `main`, then its deferred steps (last first; also on SIGINT), and exits: 1 if `main` threw, else the targets' code (open handles must not hold it). */
export function runBench(name: string, main: (defer: Defer) => Promise<void>): void {
  const steps: Array<() => Promise<unknown>> = [];
  const cleanup = async () => {
    for (const step of steps.splice(0).reverse()) await step().catch((error: unknown) => console.error(`bench:${name}: cleanup:`, error));
  };
  process.once('SIGINT', () => void cleanup().finally(() => process.exit(130)));
  main((step) => steps.push(step))
    .finally(cleanup)
    .then(
      () => process.exit(process.exitCode ?? 0),
      (error: unknown) => {
        console.error(`bench:${name} failed:`, error);
        process.exit(1);
      },
    );
}

/** Prints each target as met or MISSED; a missed one makes the process exit non-zero. */
export function reportTargets(verdicts: Array<{ ok: boolean; text: string }>): void {
  console.log('\ntargets:');
  for (const { ok, text } of verdicts) console.log(`  ${ok ? 'met   ' : 'MISSED'}  ${text}`);
  const missed = verdicts.filter((v) => !v.ok).length;
  console.log(missed === 0 ? '\nall targets met' : `\n${missed} target(s) missed`);
  if (missed > 0) process.exitCode = 1;
}

/**
 * A worker thread of the bench until it ends, the typed module `file` of bench/ (run under this process's loader,
 * which its execArgv passes on), and how to ask it: each message is answered by `{ ok, result }` or `{ ok: false, error }`.
 */
export function startWorker(file: string, defer: Defer, workerData?: unknown): { ask<T>(message: unknown): Promise<T> } {
  const worker = new Worker(new URL(file, import.meta.url), { workerData });
  defer(() => worker.terminate());
  const ask = <T>(message: unknown) =>
    new Promise<T>((resolve, reject) => {
      worker.once('message', (answer: { ok: boolean; result?: T; error?: string }) => {
        worker.off('error', reject);
        if (answer.ok) resolve(answer.result as T);
        else reject(new Error(`${file}: ${answer.error}`));
      });
      worker.once('error', reject);
      worker.postMessage(message);
    });
  return { ask };
}

/** The part of autocannon's result the benchmarks read (autocannon ships no types). */
interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  /** Bytes received (headers and bodies). */
  throughput: { total: number };
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodeStats: Record<string, { count: number }>;
}

const runAutocannon = createRequire(import.meta.url)('autocannon') as (options: Record<string, unknown>) => Promise<AutocannonResult>;

/** `url` loaded by `connections` keep-alive connections for `seconds`, from autocannon's worker thread; refused unless every answer is 2xx. */
export async function autocannon(url: string, connections: number, seconds: number): Promise<AutocannonResult> {
  const result = await runAutocannon({ url, connections, duration: seconds, workers: 1 });
  if (result.errors > 0 || result.timeouts > 0 || result.non2xx > 0 || result.requests.total === 0) {
    throw new Error(`${url}: ${result.errors} errors, ${result.timeouts} timeouts, status codes ${JSON.stringify(result.statusCodeStats)}`);
  }
  return result;
}

/** A row measured once: autocannon's result, the server's µs per answered request (NaN when unknown), the cores other work kept busy (if counted). */
export type Measured = { result: AutocannonResult; serverUs: number; otherCores?: number };

/**
 * A row measured in rounds, as one: requests/s the mean of the rounds', p50 and p99 their medians, µs per
 * request and KB per response over all of them, other work the busiest round's (undefined when a round has none).
 */
export function figuresOf(rounds: readonly Measured[]) {
  const sum = (of: (m: Measured) => number) => rounds.reduce((total, m) => total + of(m), 0);
  const requests = sum((m) => m.result.requests.total);
  const others = rounds.map((m) => m.otherCores);
  return {
    otherCores: others.includes(undefined) ? undefined : Math.max(...(others as number[])),
    rps: sum((m) => m.result.requests.average) / rounds.length,
    p50: median(rounds.map((m) => m.result.latency.p50)),
    p99: median(rounds.map((m) => m.result.latency.p99)),
    serverUs: sum((m) => m.serverUs * m.result.requests.total) / requests,
    kbPerResponse: sum((m) => m.result.throughput.total) / requests / 1024,
  };
}

/** Each round's requests/s over that of the measurement paired with it, and their median (what a target is held to). */
export function sharesOf(rounds: readonly Measured[], paired: readonly Measured[]): { shares: number[]; share: number } {
  const shares = rounds.map((m, i) => m.result.requests.average / paired[i]!.result.requests.average);
  return { shares, share: median(shares) };
}

/** The middle value (the mean of the two middle ones for an even count): how rows measured in rounds are compared. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The p-th percentile of sorted values (NaN when there are none). */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export const fmt = (n: number | undefined, digits = 0) => (n === undefined || Number.isNaN(n) ? '-' : n.toFixed(digits));
export const percent = (share: number) => `${(share * 100).toFixed(0)}%`;

/** Prints a table: the first column to the left, the others to the right. */
export function printTable(lines: string[][]): void {
  const widths = lines[0]!.map((_, i) => Math.max(...lines.map((line) => line[i]!.length)));
  const format = (line: string[]) => line.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ').trimEnd();
  console.log(format(lines[0]!));
  console.log('-'.repeat(widths.reduce((a, b) => a + b + 2, -2)));
  for (const line of lines.slice(1)) console.log(format(line));
}

export interface BenchDatabase {
  url: string;
  /** The embedded PostgreSQL's postmaster (undefined on BENCH_DATABASE_URL), for its CPU time. */
  postmasterPid: number | undefined;
  /** How the run names its database in its output. */
  label: string;
}

/** BENCH_DATABASE_URL, or the database `name` of an embedded PostgreSQL in `.data/<dir>` (git-ignored), new each run unless `keep` (then made if missing). */
export async function benchDatabase(dir: string, name: string, defer: Defer, keep = false): Promise<BenchDatabase> {
  if (DATABASE_URL) return { url: DATABASE_URL, postmasterPid: undefined, label: 'BENCH_DATABASE_URL' };
  const dataDir = path.join(ROOT, '.data', dir);
  console.log(`starting the embedded PostgreSQL in ${path.relative(process.cwd(), dataDir)}`);
  const embedded = await startEmbeddedPostgres({ dataDir });
  defer(() => embedded.stop());
  const admin = new pg.Client({ connectionString: embedded.url });
  await admin.connect();
  try {
    if (!keep) await admin.query(`drop database if exists ${name} with (force)`);
    if ((await admin.query('select 1 from pg_database where datname = $1', [name])).rowCount === 0) await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(embedded.url);
  url.pathname = `/${name}`;
  const pid = Number((await readFile(path.join(embedded.clusterDir, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0]);
  return { url: url.toString(), postmasterPid: pid > 0 ? pid : undefined, label: 'embedded' };
}

/** The operator account of the benches' services, which creates their markets. */
const ADMIN = { email: 'bench-admin@dots.local', password: 'bench-admin-password' };

/** What every bench's service runs with: on 127.0.0.1, no seed, no request budgets (all the load comes from one address), the operator account. */
const serviceSettings = (databaseUrl: string) => ({
  HOST: '127.0.0.1',
  DATABASE_URL: databaseUrl,
  SEED: 'none',
  RATE_LIMITS: 'off',
  ADMIN_EMAIL: ADMIN.email,
  ADMIN_PASSWORD: ADMIN.password,
  STARTING_BALANCE: '100000000', // enough for any run's reservations
});

/**
 * The service as `npm start` runs it (src/server.ts startService), in this process on a free port, with the benches' settings,
 * LOG_LEVEL (default info) written to /dev/null, and `env`; stopped when the bench ends.
 */
export async function startInProcess(databaseUrl: string, defer: Defer, env: Record<string, string> = {}): Promise<RunningService> {
  const config = loadConfig({ ...serviceSettings(databaseUrl), PORT: '0', LOG_LEVEL: process.env.LOG_LEVEL ?? 'info', ...env });
  const service = await startService(config, createLogger(config.logLevel, pino.destination({ dest: '/dev/null', sync: true })));
  defer(() => service.stop());
  return service;
}

export interface ServiceProcess {
  url: string;
  workers: number;
  /** The service's processes: the one given to node, and its HTTP workers when WEB_CONCURRENCY > 1. */
  pids: () => number[];
  /** Established connections to the service's port held by each process serving HTTP (Linux /proc, else undefined). */
  connections(): Map<number, number> | undefined;
  /** SIGTERM, then waits for exit code 0 (rejects otherwise; killed after STOP_DEADLINE_MS). Idempotent. */
  stop: () => Promise<void>;
}

export const processLabel = (workers: number) => `node dist/main.js WEB_CONCURRENCY=${workers}`;

type ProcessOptions = { databaseUrl: string; workers: number; env?: Record<string, string> };

const START_DEADLINE_MS = 60_000;
const STOP_DEADLINE_MS = 30_000;
const OUTPUT_KEPT = 20_000;

const killTree = (pid: number) => {
  for (const each of processTree(pid).reverse()) {
    try {
      process.kill(each, 'SIGKILL');
    } catch {
      // gone already
    }
  }
};
/** Service processes still running: killed if this process exits without stopping them. */
const running = new Set<ChildProcess>();
process.on('exit', () => running.forEach((child) => killTree(child.pid!)));
// Ended by a signal, this process exits (and so kills them) instead of dying at once.
process.once('SIGTERM', () => process.exit(143));
process.once('SIGHUP', () => process.exit(129));

/** The build, made once per run (`npm start`'s own step: nothing to do when dist/ is up to date). */
let built: Promise<void> | undefined;
export function ensureBuild(): Promise<void> {
  built ??= new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ['codegen/build.mjs', '--if-stale'], { cwd: ROOT, stdio: 'inherit' });
    child.once('error', reject);
    child.once('exit', (code, signal) => (code === 0 ? resolve() : reject(new Error(`node codegen/build.mjs --if-stale exited with ${code ?? signal}`))));
  });
  return built;
}

const exited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** GET `url` on a connection of `agent` (default: a new one): whether it answered 200. */
function answers200(url: string, agent?: http.Agent): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const request = http.get(url, { agent }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode === 200));
      response.on('error', () => resolve(false));
    });
    request.setTimeout(2_000, () => request.destroy());
    request.on('error', () => resolve(false));
  });
}

/**
 * The real service as deployed, `node dist/main.js` (built first if stale), in a process of its own on a free port, with the
 * benches' settings, WEB_CONCURRENCY=`workers`, LOG_LEVEL=warn and `env` (nothing else of this environment but PATH). Resolves
 * once /readyz answers 200 (its search index read whole) and, with several workers, new connections reach each; stopped (if not
 * before) when the bench ends.
 */
export async function startServiceProcess(options: ProcessOptions, defer: Defer): Promise<ServiceProcess> {
  await ensureBuild();
  // A free port may be taken before the service binds it: try another.
  for (let attempt = 1; ; attempt++) {
    try {
      const service = await spawnService(options, await findFreePort());
      defer(() => service.stop());
      return service;
    } catch (error) {
      if (attempt >= 3 || !/EADDRINUSE|address already in use/i.test(String((error as Error).message))) throw error;
    }
  }
}

async function spawnService(options: ProcessOptions, port: number): Promise<ServiceProcess> {
  const env: Record<string, string> = {
    ...(process.env.PATH ? { PATH: process.env.PATH } : {}),
    ...serviceSettings(options.databaseUrl),
    PORT: String(port),
    WEB_CONCURRENCY: String(options.workers),
    LOG_LEVEL: 'warn',
    ...options.env,
  };
  const child = spawn(process.execPath, ['dist/main.js'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-OUTPUT_KEPT);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exit = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', (error) => {
      keep(Buffer.from(String(error)));
      resolve(null);
    });
  }).finally(() => running.delete(child));
  const url = `http://127.0.0.1:${port}`;
  const what = processLabel(options.workers);

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      if (!exited(child)) {
        const deadline = setTimeout(() => killTree(child.pid!), STOP_DEADLINE_MS);
        child.kill('SIGTERM');
        await exit;
        clearTimeout(deadline);
      }
      const code = await exit;
      if (code !== 0) throw new Error(`${what} exited with ${code ?? child.signalCode} on SIGTERM:\n${output.slice(-2_000)}`);
    })());
  const failed = async (why: string) => {
    await stop().catch(() => {});
    return new Error(`${what}: ${why}:\n${output.slice(-2_000)}`);
  };

  const started = Date.now();
  // /readyz answers as soon as one worker is ready: with several, wait until connections reach every one.
  while (!(await answers200(`${url}/readyz`)) || (options.workers > 1 && !(await everyWorkerServes(url, child.pid!, options.workers)))) {
    if (exited(child)) throw await failed(`exited with ${child.exitCode ?? child.signalCode} before it was ready`);
    if (Date.now() - started > START_DEADLINE_MS) throw await failed(`not ready within ${START_DEADLINE_MS / 1000} s`);
    await sleep(100);
  }
  return {
    url,
    workers: options.workers,
    pids: () => processTree(child.pid!),
    connections: () => connectionsPerProcess(options.workers > 1 ? processTree(child.pid!).slice(1) : [child.pid!], port),
    stop,
  };
}

/**
 * Whether new connections reach each of the `workers` HTTP workers (round-robin from the primary): opens two
 * per worker, each answering /readyz 200, and looks which processes hold them. True where /proc is missing.
 */
async function everyWorkerServes(url: string, primary: number, workers: number): Promise<boolean> {
  const agents = Array.from({ length: 2 * workers }, () => new http.Agent({ keepAlive: true, maxSockets: 1 }));
  try {
    if (!(await Promise.all(agents.map((agent) => answers200(`${url}/readyz`, agent)))).every(Boolean)) return false;
    const counts = connectionsPerProcess(processTree(primary).slice(1), Number(new URL(url).port));
    return counts === undefined || (counts.size >= workers && [...counts.values()].every((n) => n > 0));
  } finally {
    for (const agent of agents) agent.destroy();
  }
}

/** `app` on a free port of 127.0.0.1 until the bench ends, keeping connections alive across the whole run, as the load generators expect. */
export async function listen(app: Koa, defer: Defer): Promise<{ url: string }> {
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  server.keepAliveTimeout = 60_000;
  defer(() => {
    const closed = once(server, 'close');
    server.close();
    server.closeAllConnections();
    return closed;
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** The text of `url`'s answer to `init`, which must come with `status` (default: any 2xx). */
export async function fetchText(url: string, init: RequestInit = {}, status?: number): Promise<string> {
  const response = await fetch(url, init);
  const text = await response.text();
  const expected = status === undefined ? response.ok : response.status === status;
  if (!expected) throw new Error(`${init.method ?? 'GET'} ${url}: ${response.status} ${text.slice(0, 500)}`);
  return text;
}

/** One call of the service's API with JSON in and out; anything but a 2xx answer is an error. */
export async function api<T = unknown>(base: string, method: string, route: string, body?: unknown, token?: string): Promise<T> {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const text = await fetchText(`${base}${route}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return (text ? JSON.parse(text) : undefined) as T;
}

/** A new account: its bearer token and id. */
export async function register(base: string, email: string): Promise<{ token: string; accountId: string }> {
  const body = await api<{ token: string; user: { id: string } }>(base, 'POST', '/api/auth/register', { email, password: 'correct-horse-battery' });
  return { token: body.token, accountId: body.user.id };
}

/**
 * The series `series` (a ticker unique to the run), created by the operator account; `market(name)` creates a market in an
 * event of its own, or in `event` (made by `event(name)`), and answers its ticker; `markets`, `count` of them (names `name`0...).
 */
export async function benchSeries(base: string, series: string) {
  const admin = (await api<{ token: string }>(base, 'POST', '/api/auth/login', ADMIN)).token;
  await api(base, 'POST', '/api/admin/series', { ticker: series, title: `Benchmark ${series}`, category: 'economics', frequency: 'daily' }, admin);
  const event = async (name: string): Promise<string> => {
    const ticker = `${series}-${name}`;
    await api(base, 'POST', '/api/admin/events', { event_ticker: ticker, series_ticker: series, title: `Benchmark ${name}`, strike_date: '2031-01-01T00:00:00Z' }, admin);
    return ticker;
  };
  const market = async (name: string, inEvent?: string): Promise<string> => {
    const eventTicker = inEvent ?? (await event(name));
    const ticker = `${eventTicker}-M${inEvent ? name : ''}`;
    await api(base, 'POST', '/api/admin/markets', { ticker, event_ticker: eventTicker, title: `Benchmark market ${name}` }, admin);
    return ticker;
  };
  const markets = async (name: string, count: number, inEvent?: string) => {
    const tickers: string[] = [];
    for (let i = 0; i < count; i++) tickers.push(await market(`${name}${i}`, inEvent));
    return tickers;
  };
  return { event, market, markets };
}

/** A suffix unique to the run, for tickers and emails on a database kept between runs. */
export const RUN = Date.now().toString(36).toUpperCase();
