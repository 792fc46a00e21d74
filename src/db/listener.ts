import pg from 'pg';
import type { SqlClient } from './repositories/feed.js';

/**
 * One dedicated PostgreSQL connection per process that LISTENs on a channel (outside the pool: a pooled
 * connection would miss notifications while lent out). Its queries (the relay's reads of the outbox) run
 * on the same connection, so they never wait for the pool. When the connection is lost it reconnects with
 * backoff, LISTENs again and calls `onConnect` so that what was missed meanwhile is read.
 */
export interface ListenerHandlers {
  notify(payload: string): void;
  /** After every (re)connection and LISTEN. */
  connected(): Promise<void>;
  /** When the connection is lost (notifications may be missed until `connected` is called again). */
  lost?(): void;
  error(error: unknown): void;
}

const MAX_BACKOFF_MS = 5000;

export class Listener implements SqlClient {
  #client: pg.Client | undefined;
  #stopped = false;
  #reconnect: NodeJS.Timeout | undefined;
  #backoff = 100;

  constructor(
    private readonly connectionString: string,
    private readonly channel: string,
    private readonly handlers: ListenerHandlers,
    /** How the connection shows in pg_stat_activity. */
    private readonly applicationName: string,
  ) {}

  /** Connects and LISTENs; rejects when the first connection fails. */
  async start(): Promise<void> {
    await this.#connect();
  }

  get connected(): boolean {
    return this.#client !== undefined;
  }

  async query<R extends object = Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ rows: R[] }> {
    const client = this.#client;
    if (!client) throw new Error(`the listener of ${this.channel} is not connected`);
    const result = await client.query(text, values);
    return { rows: result.rows as R[] };
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#reconnect) clearTimeout(this.#reconnect);
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => undefined);
  }

  async #connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.connectionString, application_name: this.applicationName });
    client.on('notification', (message) => {
      if (message.channel === this.channel && message.payload) this.handlers.notify(message.payload);
    });
    const lost = (error?: unknown) => {
      if (this.#client !== client) return;
      this.#client = undefined;
      client.removeAllListeners('notification');
      client.end().catch(() => undefined);
      this.handlers.lost?.();
      if (error) this.handlers.error(error);
      this.#schedule();
    };
    client.on('error', lost);
    client.on('end', () => lost());
    try {
      await client.connect();
      await client.query(`listen ${pg.escapeIdentifier(this.channel)}`);
    } catch (error) {
      client.removeAllListeners();
      client.on('error', () => undefined);
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.#stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.#client = client;
    this.#backoff = 100;
    try {
      await this.handlers.connected();
    } catch (error) {
      // Not caught up: start over with a new connection (the first start fails instead).
      if (this.#client === client) {
        this.#client = undefined;
        this.handlers.lost?.();
        client.removeAllListeners('notification');
        await client.end().catch(() => undefined);
      }
      throw error;
    }
  }

  #schedule(): void {
    if (this.#stopped || this.#reconnect) return;
    const delay = this.#backoff;
    this.#backoff = Math.min(this.#backoff * 2, MAX_BACKOFF_MS);
    this.#reconnect = setTimeout(() => {
      this.#reconnect = undefined;
      this.#connect().catch((error: unknown) => {
        this.handlers.error(error);
        this.#schedule();
      });
    }, delay);
    this.#reconnect.unref();
  }
}
