import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Account } from '../domain/accounts/service.js';
import type { FeedService } from '../domain/feed/service.js';
import { clientAddress } from '../admission/client-address.js';
import { limitHeaders } from '../admission/rate-limit.js';
import type { Logger } from '../logger.js';
import type { Connections } from './connections.js';
import type { Opener } from './feed-sessions.js';
import type { RealtimeOptions } from './options.js';

const BEARER = /^Bearer +([\x21-\x7e]{1,512}) *$/i;

/** Answers an upgrade request with an HTTP error (the error envelope) instead of a connection. */
function reject(socket: Duplex, status: number, reason: string, code: string, message: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify({ error: { code, message } });
  const challenge = status === 401 ? 'WWW-Authenticate: Bearer\r\n' : '';
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  socket.end(`HTTP/1.1 ${status} ${reason}\r\n${challenge}${extra}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/** The account of an upgrade signed with an RSA API key (signing string `<ts>GET<path>`), or why not. */
async function signedAccount(
  apiKeys: RealtimeOptions['apiKeys'],
  request: IncomingMessage,
  pathname: string,
): Promise<{ account: Account; keyId: string } | { status: 401 | 403; refused: string }> {
  const header = (name: string) => {
    const value = request.headers[name];
    return typeof value === 'string' ? value : '';
  };
  if (!apiKeys) return { status: 401, refused: 'API keys are not accepted here' };
  const check = await apiKeys.checkRsa({ key: header('kalshi-access-key'), timestamp: header('kalshi-access-timestamp'), signature: header('kalshi-access-signature') }, 'GET', pathname);
  if ('refused' in check) return { status: 401, refused: check.refused };
  if (!check.principal.scopes.includes('read')) return { status: 403, refused: "this API key lacks the 'read' scope" };
  if (!(await apiKeys.firstUse(check))) return { status: 401, refused: 'this signature was used before: sign every request afresh (replays are refused)' };
  return { account: check.principal.account, keyId: check.principal.keyId };
}

/**
 * The server's `upgrade` listener: refuses other paths (404), upgrades over the client address's budget
 * (429, before any credential is checked), upgrades while stopping or at capacity (503) and credentials
 * that do not hold (401, 403); `accept` makes the connection of the rest, with who opened it and from where.
 */
export function upgrades(
  options: Pick<RealtimeOptions, 'path' | 'maxConnections' | 'apiKeys' | 'clients' | 'upgradeBudget'>,
  feed: FeedService,
  connections: Connections,
  logger: Logger,
  accept: (request: IncomingMessage, socket: Duplex, head: Buffer, opener: Opener, address: string) => void,
): (request: IncomingMessage, socket: Duplex, head: Buffer) => void {
  return (request, socket, head) => {
    socket.on('error', () => socket.destroy());
    const pathname = (request.url ?? '/').split('?')[0];
    if (pathname !== options.path) return reject(socket, 404, 'Not Found', 'not_found', `no WebSocket endpoint at ${pathname}; the feed is at ${options.path}`);
    const address = clientAddress(request, options.clients);
    const budget = options.upgradeBudget?.take(address, 1);
    if (budget && !budget.allowed) {
      return reject(socket, 429, 'Too Many Requests', 'rate_limited', `too many WebSocket upgrades: the budget of ${budget.limit} per window of this address is spent; retry in ${budget.resetSecs} s`, limitHeaders(budget));
    }
    if (connections.closing) return reject(socket, 503, 'Service Unavailable', 'unavailable', 'the server is shutting down');
    if (connections.size >= options.maxConnections) return reject(socket, 503, 'Service Unavailable', 'unavailable', 'too many real-time connections');
    const header = request.headers.authorization;
    let token: string | undefined;
    if (header !== undefined) {
      const match = BEARER.exec(header);
      if (!match) return reject(socket, 401, 'Unauthorized', 'unauthorized', 'missing or invalid bearer token');
      token = match[1]!;
    }
    const upgrade = (account: Account | undefined, apiKeyId?: string) => {
      if (connections.closing || socket.destroyed) return socket.destroy();
      accept(request, socket, head, { account, token, apiKeyId }, address);
    };
    const failed = (error: unknown) => {
      logger.error({ err: error }, 'websocket authentication failed');
      reject(socket, 500, 'Internal Server Error', 'internal', 'internal error');
    };
    const keyId = request.headers['kalshi-access-key'];
    if (token === undefined && keyId !== undefined) {
      return void signedAccount(options.apiKeys, request, pathname).then((outcome) => {
        if ('refused' in outcome) return reject(socket, outcome.status, outcome.status === 401 ? 'Unauthorized' : 'Forbidden', outcome.status === 401 ? 'unauthorized' : 'forbidden', outcome.refused);
        upgrade(outcome.account, outcome.keyId);
      }, failed);
    }
    if (token === undefined) return upgrade(undefined);
    feed.authenticate(token).then((account) => (account ? upgrade(account) : reject(socket, 401, 'Unauthorized', 'unauthorized', 'missing or invalid bearer token')), failed);
  };
}
