import type { Server } from 'node:http';
import { WebSocketServer } from 'ws';
import type { FeedService } from '../domain/feed/service.js';
import type { Logger } from '../logger.js';
import { Connections } from './connections.js';
import { feedSessions } from './feed-sessions.js';
import { DEFAULT_REALTIME_OPTIONS, type RealtimeOptions } from './options.js';
import { upgrades } from './upgrade.js';

export interface RealtimeServer {
  /** Open connections. */
  readonly connections: number;
  /** Refuses new upgrades, closes every connection (1001) and waits for them to end. */
  close(): Promise<void>;
}

/**
 * `GET /ws` on the service's own HTTP server (options.ts says what it does): upgrades are admitted in
 * upgrade.ts, the connections kept in connections.ts, and each one's feed session (its commands and
 * subscriptions) opened in feed-sessions.ts.
 */
export function attachRealtime(server: Server, feed: FeedService, logger: Logger, overrides: Partial<RealtimeOptions> = {}): RealtimeServer {
  const options: RealtimeOptions = { ...DEFAULT_REALTIME_OPTIONS, ...overrides };
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxFrameBytes, perMessageDeflate: false, clientTracking: false });
  const connections = new Connections(options, logger);
  const sessionOf = feedSessions(feed, connections, options);
  const onUpgrade = upgrades(options, feed, connections, logger, (request, socket, head, opener, address) => {
    wss.handleUpgrade(request, socket, head, (ws) => {
      connections.open(ws, address, (client) => sessionOf(client, opener, address));
    });
  });
  server.on('upgrade', onUpgrade);

  let tick = 0;
  const revalidateEvery = Math.max(1, Math.round(options.revalidateIntervalMs / options.pingIntervalMs));
  const ping = setInterval(() => connections.ping(++tick % revalidateEvery === 0), options.pingIntervalMs);
  ping.unref();

  return {
    get connections() {
      return connections.size;
    },
    async close() {
      clearInterval(ping);
      server.off('upgrade', onUpgrade);
      await connections.close();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
