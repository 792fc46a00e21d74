/**
 * What the benchmarks share: a Koa app on a free loopback port, the service as a process of its own
 * (`node dist/main.js`), the CPU time of processes, and the verdict on their targets.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type Koa from 'koa';
import { findFreePort } from '../src/db/embedded.js';
import { connectionsPerProcess, processTree } from './proc.js';

interface Histogram {
  average: number;
  p50: number;
  p99: number;
}

/** The part of autocannon's result the benchmarks read (autocannon ships no types). */
export interface AutocannonResult {
  requests: Histogram & { total: number };
  latency: Histogram;
  /** Bytes received (headers and bodies). */
  throughput: Histogram & { total: number };
  errors: number;
  timeouts: number;
  non2xx: number;
  totalRequests: number;
  statusCodeStats: Record<string, { count: number }>;
}

export const autocannon = createRequire(import.meta.url)('autocannon') as (options: Record<string, unknown>) => Promise<AutocannonResult>;

/** The middle value (the mean of the two middle ones for an even count): how rows measured in rounds are compared. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export async function listen(app: Koa): Promise<{ server: Server; url: string }> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  // keep-alive across the whole run, as the load generators' connections expect
  server.keepAliveTimeout = 60_000;
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

export async function close(server: Server): Promise<void> {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

export interface Verdict {
  ok: boolean;
  text: string;
}

/** Prints each target as met or MISSED; a missed one makes the process exit non-zero. */
export function reportTargets(verdicts: Verdict[]): void {
  console.log('\ntargets:');
  for (const { ok, text } of verdicts) console.log(`  ${ok ? 'met   ' : 'MISSED'}  ${text}`);
  const missed = verdicts.filter((v) => !v.ok).length;
  console.log(missed === 0 ? '\nall targets met' : `\n${missed} target(s) missed`);
  if (missed > 0) process.exitCode = 1;
}

export interface ServiceProcess {
  url: string;
  workers: number;
  /** The service's processes: the one given to node, and its HTTP workers when WEB_CONCURRENCY > 1. */
  pids(): number[];
  /** Established connections to the service's port held by each process serving HTTP (the workers when WEB_CONCURRENCY > 1; Linux /proc, else undefined). */
  connections(): Map<number, number> | undefined;
  /** SIGTERM, then waits for exit code 0 (rejects otherwise; killed after STOP_DEADLINE_MS). Idempotent. */
  stop(): Promise<void>;
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const START_DEADLINE_MS = 60_000;
const STOP_DEADLINE_MS = 30_000;
const OUTPUT_KEPT = 20_000;
/**
 * Service processes still running: killed if this process exits without stopping them (a bench that failed
 * and exited), or is ended by SIGTERM or SIGHUP (which then end it as before).
 */
const running = new Set<ChildProcess>();
function killRunning(): void {
  for (const child of running) {
    for (const pid of processTree(child.pid!).reverse()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
  }
}
process.on('exit', killRunning);
function onEndingSignal(signal: NodeJS.Signals): void {
  killRunning();
  process.removeListener('SIGTERM', onEndingSignal);
  process.removeListener('SIGHUP', onEndingSignal);
  process.kill(process.pid, signal);
}
function track(child: ChildProcess): void {
  running.add(child);
  if (running.size === 1) {
    process.on('SIGTERM', onEndingSignal);
    process.on('SIGHUP', onEndingSignal);
  }
}
function untrack(child: ChildProcess): void {
  running.delete(child);
  if (running.size === 0) {
    process.removeListener('SIGTERM', onEndingSignal);
    process.removeListener('SIGHUP', onEndingSignal);
  }
}

/** The build, made once per run (`npm start`'s own step: nothing to do when dist/ is up to date). */
let built: Promise<void> | undefined;
function ensureBuild(): Promise<void> {
  built ??= new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ['codegen/build.mjs', '--if-stale'], { cwd: ROOT, stdio: 'inherit' });
    child.once('error', reject);
    child.once('exit', (code, signal) => (code === 0 ? resolve() : reject(new Error(`node codegen/build.mjs --if-stale exited with ${code ?? signal}`))));
  });
  return built;
}

const exited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

/** Whether the service answers it is ready (/readyz: its database reachable, its search index read whole). */
async function ready(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2_000) });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

/**
 * The real service as deployed, `node dist/main.js` (built first if stale), in a process of its own on a free
 * port of 127.0.0.1, on `databaseUrl` with WEB_CONCURRENCY=`workers`, LOG_LEVEL=warn, SEED=none and `env`
 * (nothing else of this process's environment but PATH, so that it runs with the settings the bench names).
 * Resolves once /readyz answers 200 (as a load balancer would wait: on a large catalogue, reading the search
 * index takes each worker several seconds, during which its requests wait) and, with several workers, new
 * connections reach every one of them, each ready.
 */
export async function startServiceProcess(options: { databaseUrl: string; workers: number; env?: Record<string, string> }): Promise<ServiceProcess> {
  await ensureBuild();
  // A free port may be taken before the service binds it: try another.
  for (let attempt = 1; ; attempt++) {
    try {
      return await spawnService(options, await findFreePort());
    } catch (error) {
      if (attempt >= 3 || !/EADDRINUSE|address already in use/i.test(String((error as Error).message))) throw error;
    }
  }
}

async function spawnService(options: { databaseUrl: string; workers: number; env?: Record<string, string> }, port: number): Promise<ServiceProcess> {
  const env: Record<string, string> = {
    ...(process.env.PATH ? { PATH: process.env.PATH } : {}),
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_URL: options.databaseUrl,
    WEB_CONCURRENCY: String(options.workers),
    LOG_LEVEL: 'warn',
    SEED: 'none',
    // As the in-process services of the benchmarks: the load comes from one address.
    RATE_LIMITS: 'off',
    ...options.env,
  };
  const child = spawn(process.execPath, ['dist/main.js'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  track(child);
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-OUTPUT_KEPT);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exit = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      untrack(child);
      resolve(code);
    });
    child.once('error', (error) => {
      keep(Buffer.from(String(error)));
      untrack(child);
      resolve(null);
    });
  });
  const url = `http://127.0.0.1:${port}`;
  const what = `node dist/main.js WEB_CONCURRENCY=${options.workers}`;

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      if (!exited(child)) {
        const tree = processTree(child.pid!);
        const deadline = setTimeout(() => {
          for (const pid of tree) {
            try {
              process.kill(pid, 'SIGKILL');
            } catch {
              // gone already
            }
          }
        }, STOP_DEADLINE_MS);
        child.kill('SIGTERM');
        await exit;
        clearTimeout(deadline);
      }
      const code = await exit;
      if (code !== 0) throw new Error(`${what} exited with ${code ?? child.signalCode} on SIGTERM:\n${output.slice(-2_000)}`);
    })());

  const started = Date.now();
  while (!(await ready(url))) {
    if (exited(child)) throw new Error(`${what} exited with ${child.exitCode ?? child.signalCode} before /readyz answered:\n${output.slice(-2_000)}`);
    if (Date.now() - started > START_DEADLINE_MS) {
      await stop().catch(() => {});
      throw new Error(`${what}: /readyz did not answer 200 within ${START_DEADLINE_MS / 1000} s:\n${output.slice(-2_000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // /readyz answers as soon as one worker is ready: wait until connections reach every worker, each ready.
  while (options.workers > 1 && !(await everyWorkerServes(url, child.pid!, options.workers))) {
    if (exited(child) || Date.now() - started > START_DEADLINE_MS) {
      await stop().catch(() => {});
      throw new Error(`${what}: not every worker took connections within ${START_DEADLINE_MS / 1000} s:\n${output.slice(-2_000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
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
    const answered = await Promise.all(
      agents.map(
        (agent) =>
          new Promise<boolean>((resolve) => {
            const request = http.get(`${url}/readyz`, { agent }, (response) => {
              response.resume();
              response.on('end', () => resolve(response.statusCode === 200));
              response.on('error', () => resolve(false));
            });
            request.setTimeout(2_000, () => request.destroy());
            request.on('error', () => resolve(false));
          }),
      ),
    );
    if (!answered.every(Boolean)) return false;
    const counts = connectionsPerProcess(processTree(primary).filter((pid) => pid !== primary), Number(new URL(url).port));
    if (counts === undefined) return true;
    return counts.size >= workers && [...counts.values()].every((n) => n > 0);
  } finally {
    for (const agent of agents) agent.destroy();
  }
}
