/**
 * npm run bench:dispatch: what the service's HTTP stack and OpenAPI dispatcher cost per request, against plain
 * Koa (docs/performance.md). Every server runs in a process of its own, started just before it is first
 * measured, loaded at 32 connections by autocannon in a worker thread of this process: plain Koa answering a
 * constant JSON (bench/plain-koa.ts); the service as deployed (`node dist/main.js`) on a literal path (GET
 * /livez: a constant answer) and a templated one (GET /events/{id}/tweet-count: the API's cheapest templated
 * read, one indexed statement); the same with request budgets on (RATE_LIMITS=on, a budget no client
 * reaches); the same with metrics on (METRICS_PORT). The rows are measured in 5 rounds, each time paired with
 * plain Koa measured just before or just after (in turn): the same server's requests/s moves by a fifth from
 * one measurement to the next on a small virtual machine. A row's share of plain Koa is the median of its
 * pairs' shares; its requests/s the mean of its rounds', p50 and p99 their medians; its server µs/req the CPU
 * time of its processes (from /proc). Exits non-zero if a row answers anything but 200, if the service is
 * under 60% of plain Koa on a row, or if its start to the first answer takes 5 s or more.
 */
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { OpenAPIV3 } from 'openapi-types';
import { emitRequestValidators } from '../codegen/validators.js';
import { findFreePort } from '../src/db/embedded.js';
import {
  autocannon, benchDatabase, benchSeries, type Defer, durationSetting, ensureBuild, fetchText, figuresOf, type Measured, percent, printTable, reportTargets,
  ROOT, RUN, runBench, sharesOf, startServiceProcess,
} from './lib.js';
import { processesCpu } from './proc.js';

const DURATION = durationSetting(2);
const ROUNDS = 5;
const WARMUP = 1;
const CONNECTIONS = 32;
const TARGET_SHARE = 0.6;
const START_LIMIT_MS = 5000;
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;
/** A budget no client of the benchmark reaches (all its load comes from one address). */
const UNREACHABLE_BUDGET = '999999999/1';
const BUDGETS = ['PUBLIC_READS', 'PRIVATE_READS', 'ORDER_WRITES', 'LOGIN', 'REGISTRATION'].map((name) => [`RATE_LIMIT_${name}`, UNREACHABLE_BUDGET] as const);

type ServerKind = 'plain' | 'full' | 'limited' | 'metrics';

/** A server of the benchmark: its URL and processes. */
type Server = { url: string; pids: () => number[]; metricsUrl?: string };

type RowId = 'plain' | 'literal' | 'templated' | 'limited' | 'metrics';

/** A row over its rounds; its shares are of the plain Koa measurements paired with its rounds. */
type Row = { id: RowId; name: string; rounds: Measured[] } & ReturnType<typeof figuresOf> & ReturnType<typeof sharesOf>;

const rowOf = (id: RowId, name: string, rounds: Measured[], plain: Measured[]): Row => ({ id, name, rounds, ...figuresOf(rounds), ...sharesOf(rounds, plain) });

/**
 * With two CPUs or more and taskset at hand, the servers run on the last CPU and this process (the load
 * generator's thread) on the others: left to the scheduler, a server and the load generator now and then
 * share a CPU for a whole measurement, and a row moves by a fifth. Answers how to pin a server's process.
 */
function pinCpus(): { pin(pid: number): void; text: string } {
  const cpus = os.availableParallelism();
  const taskset = (cpus: string, pid: number) => execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
  if (cpus < 2) return { pin: () => {}, text: 'not pinned to CPUs (one CPU)' };
  try {
    taskset(`0-${cpus - 2}`, process.pid);
  } catch {
    return { pin: () => {}, text: 'not pinned to CPUs (no taskset)' };
  }
  return { pin: (pid) => taskset(String(cpus - 1), pid), text: `servers on CPU ${cpus - 1}, load generator on the others` };
}

async function load(server: Server, pathAndQuery: string): Promise<Measured> {
  const url = `${server.url}${pathAndQuery}`;
  await autocannon(url, CONNECTIONS, WARMUP);
  const cpu = () => processesCpu(server.pids());
  const before = cpu();
  const result = await autocannon(url, CONNECTIONS, DURATION);
  const after = cpu();
  return { result, serverUs: before && after ? ((after.user + after.sys - before.user - before.sys) * 1000) / result.requests.total : NaN };
}

/** Plain Koa answering constant JSON, in a process of its own. */
async function startPlainKoa(defer: Defer): Promise<Server> {
  const child: ChildProcess = fork(path.join(ROOT, 'bench/plain-koa.ts'), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  defer(() => Promise.resolve(child.connected && child.disconnect()));
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (message) => resolve((message as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`bench/plain-koa.ts exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, pids: () => [child.pid!] };
}

/** The dispatcher really routes and validates: these must not be 200. */
async function expectRoutingAndValidation(full: string, templated: string, literal: string): Promise<void> {
  await fetchText(`${full}/api/events/${templated.split('/')[2]}?with_nested_markets=bogus`, {}, 400);
  await fetchText(`${full}/api/search?q=word&limit=0`, {}, 400);
  await fetchText(`${full}/api/search?q=word&limit=abc`, {}, 400);
  await fetchText(`${full}/nothing/here`, {}, 404);
  await fetchText(`${full}${literal}`, { method: 'PATCH' }, 405);
  await fetchText(`${full}/api/auth/register`, { method: 'POST', body: '{"email":1}', headers: { 'content-type': 'application/json' } }, 400);
}

runBench('dispatch', async (defer) => {
  const database = await benchDatabase('bench-dispatch', 'bench_dispatch', defer);
  await ensureBuild();
  const document = JSON.parse(await readFile(path.join(ROOT, 'openapi/dist/openapi.json'), 'utf8')) as OpenAPIV3.Document;
  const operations = Object.values(document.paths).reduce((n, item) => n + METHODS.filter((m) => item?.[m]).length, 0);
  // Build time, not start time: what `npm run codegen` does for the document.
  const codegenStarted = performance.now();
  await emitRequestValidators(document);
  const codegenMs = performance.now() - codegenStarted;

  const pinned = pinCpus();
  const servers = new Map<ServerKind, Server>();
  let startMs = 0;
  let templated = '';
  // Each server is started when it is first measured: a Node process idle for some seconds after a request or
  // two runs about a quarter slower under the next load (docs/performance.md, "The HTTP stack").
  const server = async (kind: ServerKind): Promise<Server> => {
    const known = servers.get(kind);
    if (known) return known;
    let started: Server;
    if (kind === 'plain') {
      started = await startPlainKoa(defer);
    } else {
      const metricsPort = kind === 'metrics' ? await findFreePort() : undefined;
      // Request budgets that are never reached, or metrics on a port of their own.
      const env: Record<string, string> =
        kind === 'limited' ? { RATE_LIMITS: 'on', ...Object.fromEntries(BUDGETS) } : metricsPort ? { METRICS_PORT: String(metricsPort) } : {};
      const begun = performance.now();
      const spawned = await startServiceProcess({ databaseUrl: database.url, workers: 1, env }, defer);
      if (kind === 'full') {
        // Start: connect, check the migrations, build the services and the dispatcher, listen; then the first answer.
        const readyMs = performance.now() - begun;
        const { event } = await benchSeries(spawned.url, `BDISPATCH${RUN}`);
        templated = `/events/${await event('E')}/tweet-count`;
        const firstAnswer = performance.now();
        await fetchText(`${spawned.url}${templated}`, {}, 200);
        startMs = readyMs + performance.now() - firstAnswer;
      }
      started = { url: spawned.url, pids: spawned.pids, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics` };
    }
    for (const pid of started.pids()) pinned.pin(pid);
    servers.set(kind, started);
    return started;
  };
  await server('plain');
  const full = (await server('full')).url;
  const literal = '/livez';

  await expectRoutingAndValidation(full, templated, literal);

  const targets: Array<{ id: RowId; name: string; server: ServerKind; path: string }> = [
    { id: 'literal', name: `full stack, literal   GET ${literal}`, server: 'full', path: literal },
    { id: 'templated', name: `full stack, templated GET ${templated}`, server: 'full', path: templated },
    { id: 'limited', name: 'full stack with rate limiting, templated GET', server: 'limited', path: templated },
    { id: 'metrics', name: 'full stack + metrics, templated GET', server: 'metrics', path: templated },
  ];
  const measured = targets.map(() => ({ rounds: [] as Measured[], plain: [] as Measured[] }));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, target] of targets.entries()) {
      const plainFirst = (round + i) % 2 === 0;
      if (plainFirst) measured[i]!.plain.push(await load(await server('plain'), '/'));
      measured[i]!.rounds.push(await load(await server(target.server), target.path));
      if (!plainFirst) measured[i]!.plain.push(await load(await server('plain'), '/'));
    }
  }
  // Checked after the rounds, not before: one request answered some seconds before a server's first load
  // leaves its process about a quarter slower under that load (docs/performance.md, "The HTTP stack").
  const limitedAnswer = await fetch(`${(await server('limited')).url}${templated}`);
  await limitedAnswer.arrayBuffer();
  if (limitedAnswer.headers.get('ratelimit-limit') !== UNREACHABLE_BUDGET.split('/')[0]) throw new Error('the limited stack does not answer with its RateLimit headers');
  const plainMeasured = measured.flatMap(({ plain }) => plain);
  const rows = [rowOf('plain', 'plain Koa, constant JSON', plainMeasured, plainMeasured), ...targets.map((target, i) => rowOf(target.id, target.name, measured[i]!.rounds, measured[i]!.plain))];
  const rowById = (id: RowId) => rows.find((row) => row.id === id)!;
  const answered = rowById('metrics').rounds.reduce((sum, m) => sum + m.result.requests.total, 0);
  const scraped = await (await fetch((await server('metrics')).metricsUrl!)).text();
  const counted = [...scraped.matchAll(/^dots_http_requests_total\{[^}]*\} (\S+)$/gm)].reduce((sum, match) => sum + Number(match[1]), 0);
  if (counted < answered) throw new Error(`metrics counted ${counted} requests, fewer than the ${answered} answered`);

  console.log(
    `\ndispatch benchmark: ${operations} operations, ${CONNECTIONS} connections, ${ROUNDS} round(s) of every row, ${DURATION} s per row after ${WARMUP} s warm-up, ` +
      `a process per server (${pinned.text}), Node ${process.version}\n`,
  );
  printTable([
    ['row', 'req/s', 'p50 ms', 'p99 ms', '% plain', 'server µs/req', 'rounds (% plain)'],
    ...rows.map((row) => [row.name, row.rps.toFixed(0), String(row.p50), String(row.p99), percent(row.share), row.serverUs.toFixed(1),
      row.id === 'plain' ? `(${row.rounds.length} measurements)` : row.shares.map(percent).join(' ')]),
  ]);
  const cost = rowById('limited').serverUs - rowById('templated').serverUs;
  console.log(`\nrate limiting: ${cost.toFixed(1)} µs of server time per request (limited templated row minus the templated row)`);
  console.log(`start to first answer (node dist/main.js: connect, check migrations, build the services and the dispatcher, listen, first 200): ${startMs.toFixed(0)} ms`);
  console.log(`(build step, not start: emitting the document's validators took ${(codegenMs / 1000).toFixed(1)} s)`);

  reportTargets([
    ...rows.filter((row) => row.id !== 'plain').map(({ name, share, shares }) => ({ ok: share >= TARGET_SHARE, text: `${name}: ${percent(share)} of plain Koa (median of ${shares.map(percent).join(', ')}; target >= ${TARGET_SHARE * 100}%)` })),
    { ok: startMs < START_LIMIT_MS, text: `start to first answer ${startMs.toFixed(0)} ms (target < ${START_LIMIT_MS} ms)` },
  ]);
});
