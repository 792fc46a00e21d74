import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { DIRECT_CLIENTS, type ClientAddressing } from '../config.js';
import { clientAddress, limitHeaders, type FixedWindows } from '../http/rate-limit.js';
import type { Account } from '../domain/accounts/service.js';
import type { ApiKeyService } from '../domain/api-keys/service.js';
import { errorReply } from '../domain/feed/messages.js';
import type { FeedService } from '../domain/feed/service.js';
import type { FeedSession } from '../domain/feed/session.js';
import { ErrorCode, type ErrorCodeValue } from '../domain/feed/types.js';
import type { Logger } from '../logger.js';

/**
 * `GET /ws`: the real-time feed's WebSocket endpoint on the service's own HTTP server (transport only:
 * commands and subscriptions are the feed's sessions, src/domain/feed/).
 *
 * - Upgrade: taken first from the client address's upgrade budget (429 beyond), before any credential is
 *   checked; then `Authorization: Bearer <token>` authenticates the connection (an invalid one is answered
 *   401 and never upgraded), or an RSA API key's KALSHI-ACCESS-* headers signed for `GET <path>` (401 when
 *   refused, 403 without the `read` scope); without either only public channels can be subscribed (or an
 *   `auth` command later). A connection opened with a key is closed when the key is revoked.
 * - Frames: text, JSON, each taken from the client address's command budget (beyond: an error, and the
 *   frame is not run); a command frame above `maxCommandBytes` is answered with an error and ignored;
 *   frames above `maxFrameBytes` close the connection (1009).
 * - Ping every `pingIntervalMs` (10 s): a connection that did not answer the previous ping is dropped.
 * - Back-pressure: a connection whose unsent data passes `maxBufferedBytes` is sent an error and closed
 *   (and destroyed `closeGraceMs` later if it still does not read): memory per connection stays bounded.
 */
export interface RealtimeOptions {
  path: string;
  pingIntervalMs: number;
  maxBufferedBytes: number;
  maxCommandBytes: number;
  maxFrameBytes: number;
  closeGraceMs: number;
  /** How often an authenticated connection's token is checked again (revoked or expired: closed). */
  revalidateIntervalMs: number;
  /** Connections open at once; more are answered 503. */
  maxConnections: number;
  /** Connections open at once from one client address; a further one is sent an error and closed. */
  maxConnectionsPerAddress: number;
  /** Order-book snapshots (markets named by orderbook_delta subscribes) per second from one client address. */
  snapshotsPerSec: number;
  /** How client addresses are told (see clientAddress). */
  clients: ClientAddressing;
  /** Upgrades per client address, taken before any token or signature is checked; none: not limited. */
  upgradeBudget?: FixedWindows;
  /** Command frames per client address, over all its connections; none: not limited. */
  commandBudget?: FixedWindows;
  /** Checks KALSHI-ACCESS-* upgrade headers; without it they are not accepted (401). */
  apiKeys?: Pick<ApiKeyService, 'checkRsa' | 'firstUse'>;
  /** Metrics: a message was sent; a slow consumer was cut off. */
  onMessageSent?: () => void;
  onSlowConsumer?: () => void;
}

export const DEFAULT_REALTIME_OPTIONS: RealtimeOptions = {
  path: '/ws',
  pingIntervalMs: 10_000,
  maxBufferedBytes: 4 * 1024 * 1024,
  maxCommandBytes: 16 * 1024,
  maxFrameBytes: 1024 * 1024,
  closeGraceMs: 5000,
  revalidateIntervalMs: 60_000,
  maxConnections: 10_000,
  maxConnectionsPerAddress: 50,
  snapshotsPerSec: 200,
  clients: DIRECT_CLIENTS,
};

export interface RealtimeServer {
  /** Open connections. */
  readonly connections: number;
  /** Refuses new upgrades, closes every connection (1001) and waits for them to end. */
  close(): Promise<void>;
}

interface Client {
  ws: WebSocket;
  session: FeedSession;
  alive: boolean;
  closing: boolean;
  /** Frames sent in this turn of the event loop go out in one write (the socket is corked until the next microtask). */
  corked: boolean;
}

/** The TCP socket under a ws connection (ws keeps it as `_socket`), to batch writes; undefined if absent. */
function socketOf(ws: WebSocket): Duplex | undefined {
  const socket = (ws as unknown as { _socket?: Duplex })._socket;
  return socket && typeof socket.cork === 'function' ? socket : undefined;
}

const BEARER = /^Bearer +([\x21-\x7e]{1,512}) *$/i;

export function attachRealtime(server: Server, feed: FeedService, logger: Logger, overrides: Partial<RealtimeOptions> = {}): RealtimeServer {
  const options: RealtimeOptions = { ...DEFAULT_REALTIME_OPTIONS, ...overrides };
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxFrameBytes, perMessageDeflate: false, clientTracking: false });
  const clients = new Set<Client>();
  let closing = false;
  const perAddress = new Map<string, number>();
  const snapshotBudget = new RateLimiterMemory({ points: options.snapshotsPerSec, duration: 1, keyPrefix: 'ws-snapshots' });
  const takeSnapshots = async (address: string, markets: number): Promise<string | undefined> => {
    if (markets > options.snapshotsPerSec) return `a subscribe may name at most ${options.snapshotsPerSec} order-book markets (the snapshot budget per second)`;
    try {
      await snapshotBudget.consume(address, markets);
      return undefined;
    } catch (refused) {
      if (refused instanceof Error) throw refused;
      const retry = Math.max(1, Math.ceil((refused as { msBeforeNext: number }).msBeforeNext / 1000));
      return `too many order-book snapshots: at most ${options.snapshotsPerSec} markets per second from one address; retry in ${retry} s`;
    }
  };

  const cutOff = (client: Client, code: ErrorCodeValue, message: string, closeCode: number) => {
    if (client.closing) return;
    client.closing = true;
    client.session.close();
    try {
      client.ws.send(errorReply(undefined, code, message));
      client.ws.close(closeCode, message.slice(0, 120));
    } catch {
      client.ws.terminate();
    }
    setTimeout(() => client.ws.terminate(), options.closeGraceMs).unref();
  };

  const onConnection = (ws: WebSocket, account: Account | undefined, token: string | undefined, apiKeyId: string | undefined, address: string) => {
    const client: Client = { ws, session: undefined as unknown as FeedSession, alive: true, closing: false, corked: false };
    const open = (perAddress.get(address) ?? 0) + 1;
    perAddress.set(address, open);
    ws.once('close', () => {
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left > 0) perAddress.set(address, left);
      else perAddress.delete(address);
    });
    const socket = socketOf(ws);
    client.session = feed.openSession(
      {
        send: (text) => {
          if (client.closing || ws.readyState !== ws.OPEN) return;
          if (ws.bufferedAmount > options.maxBufferedBytes) {
            options.onSlowConsumer?.();
            cutOff(client, ErrorCode.slowConsumer, `slow consumer: more than ${options.maxBufferedBytes} bytes waiting to be sent`, 1008);
            return;
          }
          // A record usually means several messages per connection: one system call for all of them.
          if (socket && !client.corked) {
            client.corked = true;
            socket.cork();
            queueMicrotask(() => {
              client.corked = false;
              socket.uncork();
            });
          }
          ws.send(text);
          options.onMessageSent?.();
        },
        terminate: (code, message) => cutOff(client, code, message, 1008),
        takeSnapshots: (markets) => takeSnapshots(address, markets),
      },
      account,
      token,
      apiKeyId,
    );
    clients.add(client);
    if (open > options.maxConnectionsPerAddress) {
      cutOff(client, ErrorCode.tooManyConnections, `too many connections from one address (at most ${options.maxConnectionsPerAddress})`, 1008);
    }
    ws.on('pong', () => {
      client.alive = true;
    });
    ws.on('message', (data: RawData) => {
      // binaryType 'nodebuffer' (the default): one Buffer per message, text or binary (read as UTF-8 JSON too).
      const buffer = data as Buffer;
      const budget = options.commandBudget?.take(address, 1);
      if (budget && !budget.allowed) {
        client.session.send(errorReply(undefined, ErrorCode.commandRateLimited, `too many commands: the budget of ${budget.limit} commands of this address is spent; retry in ${budget.resetSecs} s`));
        return;
      }
      if (buffer.byteLength > options.maxCommandBytes) {
        client.session.tooLarge(options.maxCommandBytes);
        return;
      }
      client.session.receive(buffer.toString('utf8'));
    });
    ws.on('error', (error) => logger.debug({ err: error }, 'websocket error'));
    ws.on('close', () => {
      clients.delete(client);
      client.session.close();
    });
  };

  /** The account of an upgrade signed with an RSA API key (signing string `<ts>GET<path>`), or why not. */
  const signedAccount = async (request: IncomingMessage, pathname: string): Promise<{ account: Account; keyId: string } | { status: 401 | 403; refused: string }> => {
    const header = (name: string) => {
      const value = request.headers[name];
      return typeof value === 'string' ? value : '';
    };
    if (!options.apiKeys) return { status: 401, refused: 'API keys are not accepted here' };
    const check = await options.apiKeys.checkRsa({ key: header('kalshi-access-key'), timestamp: header('kalshi-access-timestamp'), signature: header('kalshi-access-signature') }, 'GET', pathname);
    if ('refused' in check) return { status: 401, refused: check.refused };
    if (!check.principal.scopes.includes('read')) return { status: 403, refused: "this API key lacks the 'read' scope" };
    if (!(await options.apiKeys.firstUse(check))) return { status: 401, refused: 'this signature was used before: sign every request afresh (replays are refused)' };
    return { account: check.principal.account, keyId: check.principal.keyId };
  };

  const reject = (socket: Duplex, status: number, reason: string, code: string, message: string, headers: Record<string, string> = {}) => {
    const body = JSON.stringify({ error: { code, message } });
    const challenge = status === 401 ? 'WWW-Authenticate: Bearer\r\n' : '';
    const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\n${challenge}${extra}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  };

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const pathname = (request.url ?? '/').split('?')[0];
    if (pathname !== options.path) return reject(socket, 404, 'Not Found', 'not_found', `no WebSocket endpoint at ${pathname}; the feed is at ${options.path}`);
    const address = clientAddress(request, options.clients);
    const budget = options.upgradeBudget?.take(address, 1);
    if (budget && !budget.allowed) {
      return reject(socket, 429, 'Too Many Requests', 'rate_limited', `too many WebSocket upgrades: the budget of ${budget.limit} per window of this address is spent; retry in ${budget.resetSecs} s`, limitHeaders(budget));
    }
    if (closing) return reject(socket, 503, 'Service Unavailable', 'unavailable', 'the server is shutting down');
    if (clients.size >= options.maxConnections) return reject(socket, 503, 'Service Unavailable', 'unavailable', 'too many real-time connections');
    const header = request.headers.authorization;
    let token: string | undefined;
    if (header !== undefined) {
      const match = BEARER.exec(header);
      if (!match) return reject(socket, 401, 'Unauthorized', 'unauthorized', 'missing or invalid bearer token');
      token = match[1]!;
    }
    const upgrade = (account: Account | undefined, apiKeyId?: string) => {
      if (closing || socket.destroyed) return socket.destroy();
      wss.handleUpgrade(request, socket, head, (ws) => onConnection(ws, account, token, apiKeyId, address));
    };
    const failed = (error: unknown) => {
      logger.error({ err: error }, 'websocket authentication failed');
      reject(socket, 500, 'Internal Server Error', 'internal', 'internal error');
    };
    const keyId = request.headers['kalshi-access-key'];
    if (token === undefined && keyId !== undefined) {
      return signedAccount(request, pathname!).then((outcome) => {
        if ('refused' in outcome) return reject(socket, outcome.status, outcome.status === 401 ? 'Unauthorized' : 'Forbidden', outcome.status === 401 ? 'unauthorized' : 'forbidden', outcome.refused);
        upgrade(outcome.account, outcome.keyId);
      }, failed);
    }
    if (token === undefined) return upgrade(undefined);
    feed.authenticate(token).then((account) => (account ? upgrade(account) : reject(socket, 401, 'Unauthorized', 'unauthorized', 'missing or invalid bearer token')), failed);
  };
  server.on('upgrade', onUpgrade);

  let tick = 0;
  const revalidateEvery = Math.max(1, Math.round(options.revalidateIntervalMs / options.pingIntervalMs));
  const ping = setInterval(() => {
    tick += 1;
    for (const client of clients) {
      if (client.closing) continue;
      if (!client.alive) {
        client.session.close();
        client.ws.terminate();
        continue;
      }
      client.alive = false;
      client.ws.ping('heartbeat');
      if (tick % revalidateEvery === 0) client.session.revalidate().catch((error: unknown) => logger.error({ err: error }, 'websocket token check failed'));
    }
  }, options.pingIntervalMs);
  ping.unref();

  return {
    get connections() {
      return clients.size;
    },
    async close() {
      closing = true;
      clearInterval(ping);
      server.off('upgrade', onUpgrade);
      const ended = [...clients].map(
        (client) =>
          new Promise<void>((resolve) => {
            if (client.ws.readyState === client.ws.CLOSED) return resolve();
            client.ws.once('close', () => resolve());
            cutOff(client, ErrorCode.goingAway, 'the server is shutting down: reconnect', 1001);
          }),
      );
      const grace = new Promise<void>((resolve) => setTimeout(resolve, Math.min(options.closeGraceMs, 1000)).unref());
      await Promise.race([Promise.all(ended), grace]);
      for (const client of clients) client.ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
