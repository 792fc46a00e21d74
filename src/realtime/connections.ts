import type { WebSocket } from 'ws';
import { errorReply } from '../domain/feed/messages.js';
import type { FeedSession } from '../domain/feed/session.js';
import { ErrorCode, type ErrorCodeValue } from '../domain/feed/types.js';
import type { Logger } from '../logger.js';
import type { RealtimeOptions } from './options.js';

/** One open connection and its feed session. */
export interface Client {
  ws: WebSocket;
  session: FeedSession;
  alive: boolean;
  closing: boolean;
  /** Frames sent in this turn of the event loop go out in one write (the socket is corked until the next microtask). */
  corked: boolean;
}

/**
 * The connections open: counted per client address, kept alive by pings (dropped when a ping goes
 * unanswered), cut off with an error, and closed together when the server stops.
 */
export class Connections {
  readonly #clients = new Set<Client>();
  readonly #perAddress = new Map<string, number>();
  #closing = false;

  constructor(
    private readonly options: Pick<RealtimeOptions, 'closeGraceMs' | 'maxConnectionsPerAddress'>,
    private readonly logger: Logger,
  ) {}

  get size(): number {
    return this.#clients.size;
  }

  /** Whether the server is stopping: new connections are refused. */
  get closing(): boolean {
    return this.#closing;
  }

  /** A new connection from `address`, with the feed session `sessionOf` opens for it; over the address's share, cut off. */
  open(ws: WebSocket, address: string, sessionOf: (client: Client) => FeedSession): void {
    const client: Client = { ws, session: undefined as unknown as FeedSession, alive: true, closing: false, corked: false };
    const open = (this.#perAddress.get(address) ?? 0) + 1;
    this.#perAddress.set(address, open);
    ws.once('close', () => {
      const left = (this.#perAddress.get(address) ?? 1) - 1;
      if (left > 0) this.#perAddress.set(address, left);
      else this.#perAddress.delete(address);
    });
    client.session = sessionOf(client);
    this.#clients.add(client);
    if (open > this.options.maxConnectionsPerAddress) {
      this.cutOff(client, ErrorCode.tooManyConnections, `too many connections from one address (at most ${this.options.maxConnectionsPerAddress})`, 1008);
    }
    ws.on('pong', () => {
      client.alive = true;
    });
    ws.on('error', (error) => this.logger.debug({ err: error }, 'websocket error'));
    ws.on('close', () => {
      this.#clients.delete(client);
      client.session.close();
    });
  }

  /** Sends the error, closes the connection, and destroys it `closeGraceMs` later if it has not closed. */
  cutOff(client: Client, code: ErrorCodeValue, message: string, closeCode: number): void {
    if (client.closing) return;
    client.closing = true;
    client.session.close();
    try {
      client.ws.send(errorReply(undefined, code, message));
      client.ws.close(closeCode, message.slice(0, 120));
    } catch {
      client.ws.terminate();
    }
    setTimeout(() => client.ws.terminate(), this.options.closeGraceMs).unref();
  }

  /** Pings every connection, dropping those that did not answer the last ping; `revalidate`: checks their credentials again too. */
  ping(revalidate: boolean): void {
    for (const client of this.#clients) {
      if (client.closing) continue;
      if (!client.alive) {
        client.session.close();
        client.ws.terminate();
        continue;
      }
      client.alive = false;
      client.ws.ping('heartbeat');
      if (revalidate) client.session.revalidate().catch((error: unknown) => this.logger.error({ err: error }, 'websocket token check failed'));
    }
  }

  /** Refuses new connections, closes every one (1001) and waits for them to end (at most 1 s, then destroys them). */
  async close(): Promise<void> {
    this.#closing = true;
    const ended = [...this.#clients].map(
      (client) =>
        new Promise<void>((resolve) => {
          if (client.ws.readyState === client.ws.CLOSED) return resolve();
          client.ws.once('close', () => resolve());
          this.cutOff(client, ErrorCode.goingAway, 'the server is shutting down: reconnect', 1001);
        }),
    );
    const grace = new Promise<void>((resolve) => setTimeout(resolve, Math.min(this.options.closeGraceMs, 1000)).unref());
    await Promise.race([Promise.all(ended), grace]);
    for (const client of this.#clients) client.ws.terminate();
  }
}
