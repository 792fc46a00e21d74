import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import WebSocket from 'ws';
import { parse as parseYaml } from 'yaml';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { ASYNCAPI_PATH, startService, type RunningService, type ServiceOptions } from '../../src/server.js';
import { ApiClient, createTestDatabase, UNLIMITED } from './service.js';

const addFormats = addFormatsModule.default;

/**
 * Test support of the real-time feed: a WebSocket client that validates every message it receives against
 * the AsyncAPI document's schemas, and a service started with feed settings of the test's choosing.
 */

export const asyncapiDocument = parseYaml(readFileSync(ASYNCAPI_PATH, 'utf8')) as Record<string, any>;

/** Server message `type` -> the AsyncAPI schema of the whole message. */
const SCHEMA_OF_TYPE: Record<string, string> = {
  subscribed: 'SubscribedReply',
  unsubscribed: 'UnsubscribedReply',
  ok: 'SubscriptionListReply',
  authenticated: 'AuthenticatedReply',
  error: 'ErrorMessage',
  orderbook_snapshot: 'OrderbookSnapshotMessage',
  orderbook_delta: 'OrderbookDeltaMessage',
  trade: 'TradeMessage',
  ticker: 'TickerMessage',
  fill: 'FillMessage',
  user_order: 'UserOrderMessage',
};

class AsyncApiChecker {
  readonly ajv = new Ajv({ strict: false, allErrors: true });
  readonly #validators = new Map<string, ValidateFunction>();
  /** Messages validated, by type (every test file checks what it saw). */
  readonly seen = new Map<string, number>();

  constructor() {
    addFormats(this.ajv);
    this.ajv.addSchema(asyncapiDocument, 'asyncapi');
  }

  validator(schema: string): ValidateFunction {
    let validate = this.#validators.get(schema);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `asyncapi#/components/schemas/${schema}` });
      this.#validators.set(schema, validate);
    }
    return validate;
  }

  /** Problems of one server message (empty: valid). */
  check(message: any): string[] {
    const type = message && typeof message === 'object' ? message.type : undefined;
    const schema = SCHEMA_OF_TYPE[type];
    if (!schema) return [`message of unknown type: ${JSON.stringify(message).slice(0, 200)}`];
    this.seen.set(type, (this.seen.get(type) ?? 0) + 1);
    const validate = this.validator(schema);
    if (validate(message)) return [];
    return (validate.errors ?? []).map((e) => `${type}${e.instancePath} ${e.message ?? 'is invalid'} ${JSON.stringify(e.params)} in ${JSON.stringify(message).slice(0, 300)}`);
  }
}

export const asyncapi = new AsyncApiChecker();

export function wsUrl(baseUrl: string, path = '/ws'): string {
  return `${baseUrl.replace(/^http/, 'ws')}${path}`;
}

/** A feed client: every message it receives is parsed, kept and checked against the AsyncAPI document. */
export class FeedClient {
  readonly messages: any[] = [];
  readonly problems: string[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  pings = 0;
  #nextId = 1;
  #waiters: Array<() => void> = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => {
      let message: any;
      try {
        message = JSON.parse(data.toString());
      } catch {
        this.problems.push(`not JSON: ${data.toString().slice(0, 200)}`);
        return;
      }
      this.problems.push(...asyncapi.check(message));
      this.messages.push(message);
      this.#wake();
    });
    ws.on('ping', () => {
      this.pings += 1;
      this.#wake();
    });
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    void this.closed.then(() => this.#wake());
  }

  static connect(baseUrl: string, token?: string): Promise<FeedClient> {
    const ws = new WebSocket(wsUrl(baseUrl), { headers: token ? { authorization: `Bearer ${token}` } : {} });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new FeedClient(ws)));
      ws.once('unexpected-response', (_request, response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => reject(Object.assign(new Error(`upgrade refused: ${response.statusCode}`), { status: response.statusCode, body })));
      });
      ws.once('error', reject);
    });
  }

  sendRaw(text: string | Buffer): void {
    this.ws.send(text);
  }

  /** Sends a command with the next id; resolves with the replies to it once `count` arrived. */
  async command(cmd: string, params?: Record<string, unknown>, count = 1): Promise<any[]> {
    const id = this.#nextId++;
    this.ws.send(JSON.stringify(params === undefined ? { id, cmd } : { id, cmd, params }));
    await this.waitFor(() => this.messages.filter((m) => m.id === id).length >= count, `${count} replies to ${cmd} #${id}`);
    return this.messages.filter((m) => m.id === id);
  }

  /** Subscribes; resolves with the sids (in channel order). */
  async subscribe(channels: string[], marketTickers?: string[]): Promise<number[]> {
    const replies = await this.command('subscribe', { channels, ...(marketTickers ? { market_tickers: marketTickers } : {}) }, channels.length);
    if (replies.some((r) => r.type !== 'subscribed')) throw new Error(`subscribe failed: ${JSON.stringify(replies)}`);
    return replies.map((r) => r.msg.sid);
  }

  ofSid(sid: number | undefined): any[] {
    if (sid === undefined) throw new Error('no sid');
    return this.messages.filter((m) => m.sid === sid && m.seq !== undefined);
  }

  /** Resolves when `predicate` holds (checked on every message), or rejects after `timeoutMs`. */
  waitFor(predicate: () => boolean, what = 'condition', timeoutMs = 10_000): Promise<void> {
    if (predicate()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== check);
        reject(new Error(`timed out waiting for ${what}; last messages: ${JSON.stringify(this.messages.slice(-3))}`));
      }, timeoutMs);
      const check = () => {
        if (!predicate()) return;
        clearTimeout(timer);
        this.#waiters = this.#waiters.filter((w) => w !== check);
        resolve();
      };
      this.#waiters.push(check);
    });
  }

  close(): void {
    this.ws.close();
  }

  #wake(): void {
    for (const waiter of [...this.#waiters]) waiter();
  }
}

/** Every data message of a subscription: seq is 1, 2, 3, ... without a gap. */
export function seqGaps(messages: any[]): string[] {
  const problems: string[] = [];
  messages.forEach((m, i) => {
    if (m.seq !== i + 1) problems.push(`sid ${m.sid}: message ${i} has seq ${m.seq}`);
  });
  return problems;
}

type Book = { yes: Array<[string, string]>; no: Array<[string, string]> };

/** The book a client holds after the snapshot and the deltas of one orderbook_delta subscription (one market). */
export function applyBook(messages: any[]): Book {
  const snapshot = messages.find((m) => m.type === 'orderbook_snapshot');
  if (!snapshot) throw new Error('no snapshot');
  const sides = { yes: new Map<string, number>(), no: new Map<string, number>() };
  // Counts in 0.0001 units, exactly.
  const units = (s: string) => Math.round(Number(s) * 10_000);
  for (const side of ['yes', 'no'] as const) for (const [price, count] of snapshot.msg[side]) sides[side].set(price, units(count));
  for (const m of messages) {
    if (m.type !== 'orderbook_delta') continue;
    const side = sides[m.msg.side as 'yes' | 'no'];
    const next = (side.get(m.msg.price) ?? 0) + units(m.msg.delta);
    if (next < 0) throw new Error(`level ${m.msg.side} ${m.msg.price} below zero after seq ${m.seq}`);
    if (next === 0) side.delete(m.msg.price);
    else side.set(m.msg.price, next);
  }
  const format = (u: number) => {
    const whole = Math.trunc(u / 10_000);
    const frac = String(u % 10_000).padStart(4, '0').replace(/0+$/, '');
    return frac ? `${whole}.${frac}` : String(whole);
  };
  const levels = (side: Map<string, number>, order: 1 | -1) =>
    [...side].sort(([a], [b]) => order * (Number(b) - Number(a))).map(([price, u]) => [price, format(u)] as [string, string]);
  return { yes: levels(sides.yes, 1), no: levels(sides.no, 1) };
}

/** The service in this process on a fresh copy of the template database, with feed settings for the test. */
export async function startFeedService(env: Record<string, string>, options: ServiceOptions = {}): Promise<{ service: RunningService; api: ApiClient }> {
  const databaseUrl = await createTestDatabase();
  const config = loadConfig({ PORT: '0', LOG_LEVEL: 'silent', DATABASE_URL: databaseUrl, SEED: 'none', ...UNLIMITED, ...env });
  const service = await startService(config, createLogger(config.logLevel), options);
  return { service, api: new ApiClient(service.url) };
}

/** A series, an event and a new ACTIVE market per call, through the admin API. */
export class Markets {
  #count = 0;
  #ready: Promise<void> | undefined;

  constructor(
    private readonly api: ApiClient,
    private readonly adminToken: () => string,
    private readonly prefix: string,
  ) {}

  async create(): Promise<string> {
    this.#ready ??= (async () => {
      const token = this.adminToken();
      const series = await this.api.post('/api/admin/series', { ticker: this.prefix, title: `${this.prefix} series`, category: 'economics', frequency: 'daily' }, { token });
      if (series.status !== 201) throw new Error(`series: ${series.status} ${JSON.stringify(series.body)}`);
      const event = await this.api.post('/api/admin/events', { event_ticker: `${this.prefix}-E`, series_ticker: this.prefix, title: `${this.prefix} event`, strike_date: '2031-01-01T00:00:00Z' }, { token });
      if (event.status !== 201) throw new Error(`event: ${event.status} ${JSON.stringify(event.body)}`);
    })();
    await this.#ready;
    this.#count += 1;
    const ticker = `${this.prefix}-E-M${this.#count}`;
    const market = await this.api.post('/api/admin/markets', { ticker, event_ticker: `${this.prefix}-E`, title: `Market ${this.#count}` }, { token: this.adminToken() });
    if (market.status !== 201) throw new Error(`market: ${market.status} ${JSON.stringify(market.body)}`);
    return ticker;
  }
}
