/** What the benchmarks share: a Koa app on a free loopback port, and the verdict on their targets. */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type Koa from 'koa';

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
