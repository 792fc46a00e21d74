/**
 * The load generator of bench:orders, a worker thread (so that the service keeps the main thread): clients
 * on keep-alive connections of their own, one request at a time each, cycling through their requests.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { parentPort } from 'node:worker_threads';

export interface WireRequest {
  method: string;
  path: string;
  token: string;
  /** Sent signed with this RSA API key (KALSHI-ACCESS-*) instead of the token, with a pre-signed signature. */
  keyId?: string;
  /** JSON text. */
  body?: string;
}

export type LoadJob =
  /** Each client cycles through its requests until the duration is over (or `maxRequests` were sent in all). */
  | { type: 'load'; port: number; clients: WireRequest[][]; warmupMs: number; durationMs: number | null; maxRequests?: number; collectIds?: boolean }
  /** Makes `count` signatures of `method` + `path` with the private key `pem`, for the signed requests of the next load (lasting about `useMs`). */
  | { type: 'presign'; pem: string; count: number; method: string; path: string; useMs: number }
  | { type: 'once'; port: number; request: WireRequest };

export interface LoadResult {
  latencies: number[];
  statuses: Record<string, number>;
  orderStatuses: Record<string, number>;
  /** Orders placed (answered with an order: one per single placement, one per placed item of a batch). */
  placed: number;
  /** Orders of batches answered with an error. */
  refused: number;
  ids: string[];
  failures: string[];
  elapsedMs: number;
}

export type OnceResult = { status: number; text: string; ms: number };

/** Signatures made before a signed row starts (the load thread signs nothing while it measures), each used once. */
let signatures: Array<{ timestamp: string; signature: string }> = [];

/**
 * RSA-PSS signatures of method + path, as a Kalshi client makes them, one per future request. Each carries
 * the time it is about to be used, not the time it was made: signing a long row's worth takes longer than
 * the service's window (30 s) by itself. The signing time is estimated from the first signatures, and the
 * row's time (useMs) is spread over the signatures in the order they are used (the last made first).
 */
function presign({ pem, count, method, path, useMs }: Extract<LoadJob, { type: 'presign' }>): void {
  const key = crypto.createPrivateKey(pem);
  const sign = (timestamp: string) => crypto.sign('sha256', Buffer.from(timestamp + method + path), { key, padding: crypto.constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }).toString('base64');
  const started = Date.now();
  for (let i = 0; i < 20; i++) sign(String(started));
  const rowStarts = started + ((Date.now() - started) / 20) * (count + 20);
  signatures = Array.from({ length: count }, (_, i) => {
    const timestamp = String(Math.round(rowStarts + ((count - 1 - i) * useMs) / count));
    return { timestamp, signature: sign(timestamp) };
  });
}

/** One request on a connection of `agent`, its body read whole (status 0: a network error); bench:ws places its orders with it too. */
export function send(agent: http.Agent, port: number, req: WireRequest): Promise<{ status: number; text: string; started: number; ended: number }> {
  return new Promise((resolve) => {
    const signed = req.keyId === undefined ? undefined : signatures.pop();
    if (req.keyId !== undefined && !signed) throw new Error('the pre-signed signatures ran out: raise the count of the row');
    const headers: Record<string, string> = signed
      ? { 'kalshi-access-key': req.keyId!, 'kalshi-access-timestamp': signed.timestamp, 'kalshi-access-signature': signed.signature }
      : { authorization: `Bearer ${req.token}` };
    const body = req.body === undefined ? undefined : Buffer.from(req.body);
    if (body) Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(body.length) });
    const started = performance.now();
    const done = (status: number, text: string) => resolve({ status, text, started, ended: performance.now() });
    const r = http.request({ host: '127.0.0.1', port, method: req.method, path: req.path, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done(res.statusCode ?? 0, Buffer.concat(chunks).toString()));
      res.on('error', (e) => done(0, String(e)));
    });
    r.setTimeout(30_000, () => r.destroy(new Error('timeout after 30 s')));
    r.on('error', (e) => done(0, String(e)));
    r.end(body);
  });
}

async function load(job: Extract<LoadJob, { type: 'load' }>): Promise<LoadResult> {
  const agents = job.clients.map(() => new http.Agent({ keepAlive: true, maxSockets: 1 }));
  const t0 = performance.now();
  const from = t0 + job.warmupMs;
  const until = job.durationMs === null ? Infinity : from + job.durationMs;
  const result: LoadResult = { latencies: [], statuses: {}, orderStatuses: {}, ids: [], placed: 0, refused: 0, failures: [], elapsedMs: 0 };
  const fail = (text: string) => result.failures.length < 5 && result.failures.push(text);
  let issued = 0;
  await Promise.all(
    job.clients.map(async (cycle, c) => {
      for (let i = 0; performance.now() < until && issued < (job.maxRequests ?? Infinity); i++) {
        issued++;
        const request = cycle[i % cycle.length]!;
        if (request.keyId !== undefined && signatures.length === 0) break;
        const res = await send(agents[c]!, job.port, request);
        if (res.ended < from || res.ended > until) continue;
        result.latencies.push(res.ended - res.started);
        result.statuses[res.status] = (result.statuses[res.status] ?? 0) + 1;
        if (res.status < 200 || res.status > 299) {
          fail(`${res.status} ${res.text.slice(0, 300)}`);
          continue;
        }
        // A single placement answers {order}; a batch placement {orders: [{order, error}]}.
        const answer = JSON.parse(res.text) as { orders?: Array<{ order?: { order_id: string; status: string }; error?: unknown }>; order?: { order_id: string; status: string } };
        for (const item of answer.orders ?? [answer]) {
          if (item.order) {
            result.placed++;
            result.orderStatuses[item.order.status] = (result.orderStatuses[item.order.status] ?? 0) + 1;
            if (job.collectIds) result.ids.push(item.order.order_id);
          } else if ('error' in item) {
            result.refused++;
            fail(`an order of a batch refused: ${JSON.stringify(item.error).slice(0, 300)}`);
          }
        }
      }
    }),
  );
  result.elapsedMs = job.durationMs ?? performance.now() - t0;
  for (const agent of agents) agent.destroy();
  return result;
}

async function once(job: Extract<LoadJob, { type: 'once' }>): Promise<OnceResult> {
  const agent = new http.Agent({ keepAlive: false });
  const res = await send(agent, job.port, job.request);
  agent.destroy();
  return { status: res.status, text: res.text, ms: res.ended - res.started };
}

async function answer(job: LoadJob): Promise<void> {
  try {
    const result = job.type === 'load' ? await load(job) : job.type === 'presign' ? presign(job) : await once(job);
    parentPort!.postMessage({ ok: true, result });
  } catch (error) {
    parentPort!.postMessage({ ok: false, error: String((error as Error).stack ?? error) });
  }
}

// (answer catches every error and posts it back; no parentPort where bench:ws imports `send`)
parentPort?.on('message', (job: LoadJob) => void answer(job));
