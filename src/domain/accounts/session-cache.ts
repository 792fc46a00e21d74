/**
 * The sessions this process looked up recently, so that an authenticated request does not ask the database
 * again: under load that lookup is a round trip per request, as much PostgreSQL work as the request itself
 * for a placement.
 *
 * Correct only while told of every change: the cache is used while `open` (the process LISTENs to the
 * session-change channel, migration 0015), and each change announced there forgets what it concerns
 * (`changed`). While the listener is down it is closed, and emptied, so nothing it held before is trusted
 * again. A lookup that started before a change (its answer may predate it) is not stored: every change
 * advances a generation, and `store` takes the generation read before the lookup. Entries also age out
 * (`ttlMs`), and a session is never served past its own expiry.
 */
export interface SessionCacheOptions {
  /** How long a looked-up session is trusted without asking again. */
  ttlMs: number;
  /** Entries kept at most (the oldest go first). */
  maxEntries: number;
  /**
   * What the entries are, as change notifications name them: `token` (sessions, keyed by token hash, the
   * default) or `key` (API keys, keyed by id). A notification naming the other kind leaves entries alone.
   */
  kind?: 'token' | 'key';
}

const KINDS = ['token', 'key'] as const;

interface Entry<A> {
  account: A;
  userId: string;
  /** When the session itself expires. */
  expiresAtMs: number;
  /** When this entry ages out. */
  staleAtMs: number;
}

export class SessionCache<A> {
  readonly #entries = new Map<string, Entry<A>>();
  #generation = 0;
  #open = false;

  constructor(private readonly options: SessionCacheOptions) {}

  /** Starts serving (the change listener is connected): forgets everything held before. */
  open(): void {
    this.#forgetAll();
    this.#open = true;
  }

  /** Stops serving (the change listener is down) and forgets everything. */
  close(): void {
    this.#open = false;
    this.#forgetAll();
  }

  /** What to pass to `store` for a lookup that starts now. */
  get generation(): number {
    return this.#generation;
  }

  /** The account of a cached session `key` (the token's hash), unless it aged out or expired. */
  get(key: string, nowMs: number): A | undefined {
    if (!this.#open) return undefined;
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (nowMs >= entry.staleAtMs || nowMs >= entry.expiresAtMs) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.account;
  }

  /** Keeps a session found by a lookup that started at `generation`, unless something changed since. */
  store(key: string, session: { account: A; userId: string; expiresAt: Date }, generation: number, nowMs: number): void {
    if (!this.#open || generation !== this.#generation) return;
    this.#entries.delete(key);
    if (this.#entries.size >= this.options.maxEntries) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
    this.#entries.set(key, { account: session.account, userId: session.userId, expiresAtMs: session.expiresAt.getTime(), staleAtMs: nowMs + this.options.ttlMs });
  }

  /** A change notification (migrations 0015 and 0021): `token:<hash hex>`, `key:<id>`, `user:<id>` or `*`. */
  changed(payload: string): void {
    this.#generation += 1;
    const own = `${this.options.kind ?? 'token'}:`;
    if (payload.startsWith(own)) {
      this.#entries.delete(payload.slice(own.length));
    } else if (KINDS.some((kind) => payload.startsWith(`${kind}:`))) {
      // another cache's entry
    } else if (payload.startsWith('user:')) {
      const userId = payload.slice('user:'.length);
      for (const [key, entry] of this.#entries) if (entry.userId === userId) this.#entries.delete(key);
    } else {
      this.#entries.clear();
    }
  }

  #forgetAll(): void {
    this.#generation += 1;
    this.#entries.clear();
  }
}
