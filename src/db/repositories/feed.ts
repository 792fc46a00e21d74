import pg from 'pg';
import { NamedStatement, type Db, type Queryable } from '../knex.js';
import { LIVE, type FeedEventsRow, type FeedSequencesRow } from '../tables.js';
import type { BookLevelRecord, MarketFiguresRecord } from './trading.js';

/**
 * The real-time feed's outbox (feed_events, feed_sequences): records written inside trading transactions,
 * read back in order by every process's listener, pruned by age. A record's events are JSON the service
 * builds and reads: stored and returned whole, never looked into here.
 */

/** One outbox record as read back. */
export interface FeedRecordRead<Events> {
  marketId: string;
  seq: number;
  ticker: string;
  events: Events;
  createdAt: Date;
}

/** A market's book, figures and feed sequence number, read from one snapshot. */
export interface BookSnapshotRead {
  seq: number;
  levels: BookLevelRecord[];
  figures: MarketFiguresRecord;
}

/**
 * The NOTIFY channel. The payload lists the records a transaction wrote, `market_id:seq:accounts` joined by
 * commas, `accounts` being the ids of the accounts with a fill or an order change in the record joined by
 * `|` (or `*`: any); a payload of just `*` means "too many to list: look at every market".
 */
export const FEED_CHANNEL = 'dots_feed';

/** What the listener's dedicated connection offers (a pg.Client). */
export interface SqlClient {
  query<R extends object = Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
}

/** What appendFeedRecords wrote: the notification to send once committed, and the records as every process reads them. */
export interface AppendedFeedRecords<Events> {
  /** The notification items (`market_id:seq:accounts,...`), null when nothing was written. */
  notification: string | null;
  /** In the order of the entries. */
  records: Array<FeedRecordRead<Events>>;
}

/** Timestamps as pg parses a timestamptz column (so that a record published from here equals the one read back). */
const parseTimestamptz = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ) as (text: string) => Date;

const FEED_APPEND_RECORDS = new NamedStatement<{ written: { notification: string; written_at: string; seqs: number[]; tickers: string[] } | null }>(
  'dots_feed_append_records',
  'select feed_append_records(:market_ids::bigint[], :events::json, :accounts::text[]) as written',
);

/**
 * Writes one record per entry inside the caller's trading transaction (which holds the row locks of these
 * markets), by one call of feed_append_records (src/db/functions/feed_append_records.sql): each market's sequence is
 * incremented (several entries of one market are numbered in order) and the record stores the events as the
 * service built them. Returns the notification items for the caller to send with a FeedNotifier once the
 * transaction has committed (the transaction does not NOTIFY itself, since one that does commits under a global
 * lock: trading transactions would commit one at a time), and the records as written, for the caller to publish
 * to its own subscribers once committed. Kept small on purpose: it runs while the markets are locked.
 */
export async function appendFeedRecords<Events>(
  db: Queryable,
  entries: ReadonlyArray<{ marketId: string; events: Events; accounts: readonly string[] | '*' }>,
): Promise<AppendedFeedRecords<Events>> {
  if (entries.length === 0) return { notification: null, records: [] };
  const texts = entries.map((e) => JSON.stringify(e.events));
  const result = await FEED_APPEND_RECORDS.run(db, {
    market_ids: entries.map((e) => e.marketId),
    events: `[${texts.join(',')}]`,
    accounts: entries.map((e) => (e.accounts === '*' ? '*' : e.accounts.join('|'))),
  });
  const written = result.rows[0]?.written;
  if (!written) return { notification: null, records: [] };
  const createdAt = parseTimestamptz(written.written_at);
  return {
    notification: written.notification,
    // The events as the caller gave them: JSON values only (the outbox writes decimals and times as strings), so
    // the same as every other process reads back from the table; parsing the text again would only copy them,
    // while the markets are still locked.
    records: entries.map((e, i) => ({ marketId: e.marketId, seq: written.seqs[i]!, ticker: written.tickers[i]!, events: e.events, createdAt })),
  };
}

/** Payloads above this length are split (PostgreSQL refuses payloads of 8000 bytes or more). */
const MAX_PAYLOAD = 7900;

/**
 * Sends the notifications of committed transactions (appendFeedRecords' items), after their COMMIT, from
 * the process that committed them: items that arrive while a send is in flight go together in the next one
 * (one statement, one pg_notify per payload of at most MAX_PAYLOAD characters). Listeners read the outbox
 * by sequence, so a notification only says where to look: one sent late, or out of commit order between
 * processes, is harmless (a market's records up to a notified seq are all committed, since each took the
 * market's lock after the previous one committed); a lost one (the process died between COMMIT and
 * sending) is made up by the market's next notification or the listener's resync.
 */
export class FeedNotifier {
  #items: string[] = [];
  #sending: Promise<void> | undefined;

  constructor(
    private readonly db: Queryable,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {}

  /** Queues the items of a committed transaction (null: none) and starts sending. */
  notify(items: string | null): void {
    if (!items) return;
    this.#items.push(items);
    this.#sending ??= this.#send().finally(() => {
      this.#sending = undefined;
    });
  }

  /** Resolves once everything queued so far has been sent (or failed). */
  async flush(): Promise<void> {
    while (this.#sending) await this.#sending;
  }

  async #send(): Promise<void> {
    // Let the commits of this turn of the event loop join the first send.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.#items.length > 0) {
      const batch = this.#items;
      this.#items = [];
      const payloads: string[] = [];
      let current = '';
      for (const list of batch) {
        for (const item of list.split(',')) {
          if (item.length + 1 > MAX_PAYLOAD) {
            payloads.push('*');
            continue;
          }
          if (current.length + item.length + 1 > MAX_PAYLOAD) {
            payloads.push(current);
            current = '';
          }
          current = current === '' ? item : `${current},${item}`;
        }
      }
      if (current !== '') payloads.push(current);
      try {
        await this.db.raw('select pg_notify(?, p) from unnest(?::text[]) with ordinality as v (p, i) order by i', [FEED_CHANNEL, payloads]);
      } catch (error) {
        this.onError(error);
      }
    }
  }
}

/**
 * Records of these markets after the given sequence numbers, in sequence order per market (at most
 * `limit`; call again for the rest).
 */
export async function readFeedEvents<Events>(client: SqlClient, after: ReadonlyArray<readonly [string, number]>, limit: number): Promise<Array<FeedRecordRead<Events>>> {
  if (after.length === 0) return [];
  const { rows } = await client.query<FeedEventsRow<Events>>(
    `select f.market_id::text as market_id, f.seq::text as seq, f.ticker, f.events, f.created_at
       from unnest($1::bigint[], $2::bigint[]) as c (market_id, after_seq)
       join feed_events f on f.market_id = c.market_id and f.seq > c.after_seq
      order by f.market_id, f.seq
      limit $3`,
    [after.map(([m]) => m), after.map(([, s]) => s), limit],
  );
  return rows.map((r) => ({
    marketId: r.market_id,
    seq: Number(r.seq),
    ticker: r.ticker,
    events: r.events,
    createdAt: r.created_at,
  }));
}

/** Every market's latest sequence number. */
export async function feedSequences(client: SqlClient): Promise<Array<[string, number]>> {
  const { rows } = await client.query<FeedSequencesRow>('select market_id::text as market_id, seq::text as seq from feed_sequences');
  return rows.map((r) => [r.market_id, Number(r.seq)]);
}

/**
 * Markets' books (every live order, aggregated by level, as the orderbook endpoint reads it), figures and
 * feed sequence numbers, from one database snapshot and three queries whatever their number (a subscription
 * naming 100 markets, or concurrent subscribers of one market, cost one read): every record after a market's
 * `seq` changes them, none before it does. Orders past their expiry but not yet swept are included: the
 * sweep's cancel, a record after `seq`, removes them.
 */
export async function bookSnapshots(db: Db, marketIds: readonly string[]): Promise<Map<string, BookSnapshotRead>> {
  const ids = [...new Set(marketIds)];
  if (ids.length === 0) return new Map();
  return db.transaction(
    async (tx) => {
      const seqs: FeedSequencesRow[] = await tx('feed_sequences').whereIn('market_id', ids).select(tx.raw('market_id::text as market_id'), tx.raw('seq::text as seq'));
      const levels: Array<BookLevelRecord & { market_id: string }> = await tx('orders')
        .whereIn('market_id', ids)
        .whereRaw(LIVE)
        .groupBy('market_id', 'book_side', 'yes_price')
        .select(tx.raw('market_id::text as market_id'), 'book_side', 'yes_price', tx.raw('sum(remaining)::text as count'));
      const figures: Array<MarketFiguresRecord & { id: string }> = await tx('markets').whereIn('id', ids).select(tx.raw('id::text as id'), 'last_yes_price', 'volume', 'open_interest');
      const snapshots = new Map<string, BookSnapshotRead>();
      for (const row of figures) {
        const { id, ...rest } = row;
        snapshots.set(id, { seq: 0, levels: [], figures: rest });
      }
      for (const row of seqs) {
        const snapshot = snapshots.get(row.market_id);
        if (snapshot) snapshot.seq = Number(row.seq);
      }
      for (const { market_id, ...level } of levels) snapshots.get(market_id)?.levels.push(level);
      return snapshots;
    },
    { isolationLevel: 'repeatable read', readOnly: true },
  );
}

/** Deletes records older than `retentionSecs`; returns how many. */
export async function pruneFeedEvents(db: Queryable, retentionSecs: number): Promise<number> {
  const result = await db.raw<{ rowCount: number }>(`delete from feed_events where created_at < clock_timestamp() - make_interval(secs => ?)`, [retentionSecs]);
  return result.rowCount ?? 0;
}

/** A market by ticker (exact) for subscriptions: its id and ticker. */
export async function findMarketsByTicker(db: Queryable, tickers: readonly string[]): Promise<Array<{ id: string; ticker: string }>> {
  if (tickers.length === 0) return [];
  const rows: Array<{ id: string; ticker: string }> = await db('markets').whereIn('ticker', [...tickers]).select('id', 'ticker');
  return rows.map((r) => ({ id: String(r.id), ticker: r.ticker }));
}
