import type { Duplex } from 'node:stream';
import type { RawData } from 'ws';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import type { Account } from '../domain/accounts/service.js';
import type { FeedService } from '../domain/feed/service.js';
import type { FeedSession } from '../domain/feed/session.js';
import { errorReply } from '../domain/feed/messages.js';
import { ErrorCode } from '../domain/feed/types.js';
import type { Client, Connections } from './connections.js';
import type { RealtimeOptions } from './options.js';

/** Who opened a connection: an account by its token or an API key, or no one (public channels only). */
export interface Opener {
  account?: Account;
  token?: string;
  apiKeyId?: string;
}

/** The TCP socket under a ws connection (ws keeps it as `_socket`), to batch writes; undefined if absent. */
function socketOf(client: Client): Duplex | undefined {
  const socket = (client.ws as unknown as { _socket?: Duplex })._socket;
  return socket && typeof socket.cork === 'function' ? socket : undefined;
}

/**
 * The feed sessions of connections (commands and subscriptions: src/domain/feed/): what a session sends
 * goes out corked per turn of the event loop, and cuts a slow consumer off; the connection's frames are its
 * commands, each taken from the client address's command budget (beyond: error 107, not run); order-book
 * snapshots are taken from the client address's budget.
 */
export function feedSessions(
  feed: FeedService,
  connections: Connections,
  options: Pick<RealtimeOptions, 'maxBufferedBytes' | 'maxCommandBytes' | 'snapshotsPerSec' | 'commandBudget' | 'onMessageSent' | 'onSlowConsumer'>,
): (client: Client, opener: Opener, address: string) => FeedSession {
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

  return (client, { account, token, apiKeyId }, address) => {
    const { ws } = client;
    const socket = socketOf(client);
    const session = feed.openSession(
      {
        send: (text) => {
          if (client.closing || ws.readyState !== ws.OPEN) return;
          if (ws.bufferedAmount > options.maxBufferedBytes) {
            options.onSlowConsumer?.();
            connections.cutOff(client, ErrorCode.slowConsumer, `slow consumer: more than ${options.maxBufferedBytes} bytes waiting to be sent`, 1008);
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
        terminate: (code, message) => connections.cutOff(client, code, message, 1008),
        takeSnapshots: (markets) => takeSnapshots(address, markets),
      },
      account,
      token,
      apiKeyId,
    );
    ws.on('message', (data: RawData) => {
      // binaryType 'nodebuffer' (the default): one Buffer per message, text or binary (read as UTF-8 JSON too).
      const buffer = data as Buffer;
      const budget = options.commandBudget?.take(address, 1);
      if (budget && !budget.allowed) {
        session.send(errorReply(undefined, ErrorCode.commandRateLimited, `too many commands: the budget of ${budget.limit} commands of this address is spent; retry in ${budget.resetSecs} s`));
        return;
      }
      if (buffer.byteLength > options.maxCommandBytes) {
        session.tooLarge(options.maxCommandBytes);
        return;
      }
      session.receive(buffer.toString('utf8'));
    });
    return session;
  };
}
