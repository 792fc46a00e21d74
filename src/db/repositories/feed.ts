import type { Db, Queryable } from '../knex.js';
import type { BookSnapshot, FeedEvents, FeedRecord, MarketFigures } from '../../domain/feed/types.js';
import { bookLevels } from './trading.js';

/**
 * The real-time feed's outbox (migration 0010): records written inside trading transactions, read back in
 * order by every process's listener, pruned by age.
 */

/**
 * The NOTIFY channel. The payload lists the records a transaction wrote, `market_id:seq:accounts` joined by
 * commas, `accounts` being the ids of the accounts with a fill or an order change in the record joined by
 * `|` (or `*`: any); a payload of just `*` means "too many to list: look at every market". (Named in
 * feed_append too.)
 */
export const FEED_CHANNEL = 'dots_feed';

/** What the listener's dedicated connection offers (a pg.Client). */
export interface SqlClient {
  query<R extends object = Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
}

/**
 * Writes one record per entry inside the caller's trading transaction (which holds the row locks of these
 * markets), by one call of feed_append (migration 0010): each market's sequence is incremented, the record
 * stores the events as the service built them, and pg_notify tells every listener at commit (nothing is
 * sent if the transaction rolls back). Kept small on purpose: it runs while the markets are locked.
 */
export async function appendFeedEvents(db: Queryable, entries: ReadonlyArray<{ marketId: string; events: FeedEvents; accounts: readonly string[] | '*' }>): Promise<void> {
  if (entries.length === 0) return;
  await db.raw('select feed_append(?::bigint[], ?::text[], ?::text[])', [
    entries.map((e) => e.marketId),
    entries.map((e) => JSON.stringify(e.events)),
    entries.map((e) => (e.accounts === '*' ? '*' : e.accounts.join('|'))),
  ]);
}

interface RecordRow {
  market_id: string;
  seq: string;
  ticker: string;
  events: FeedEvents;
  created_at: Date;
}

/**
 * Records of these markets after the given sequence numbers, in sequence order per market (at most
 * `limit`; call again for the rest).
 */
export async function readFeedEvents(client: SqlClient, after: ReadonlyArray<readonly [string, number]>, limit: number): Promise<FeedRecord[]> {
  if (after.length === 0) return [];
  const { rows } = await client.query<RecordRow>(
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
  const { rows } = await client.query<{ market_id: string; seq: string }>('select market_id::text as market_id, seq::text as seq from feed_sequences');
  return rows.map((r) => [r.market_id, Number(r.seq)]);
}

/**
 * A market's book (every live order, aggregated by level, as the orderbook endpoint reads it), its figures
 * and its feed sequence number, from one snapshot: every record after `seq` changes them, none before it does.
 * Orders past their expiry but not yet swept are included: the sweep's cancel, a record after `seq`,
 * removes them.
 */
export async function bookSnapshot(db: Db, marketId: string): Promise<BookSnapshot> {
  return db.transaction(
    async (tx) => {
      const row = await tx('feed_sequences').where({ market_id: marketId }).first('seq');
      const levels = await bookLevels(tx, marketId, new Date(0));
      const figures: MarketFigures = await tx('markets').where({ id: marketId }).first('last_yes_price', 'volume', 'open_interest');
      return { seq: row ? Number(row.seq) : 0, levels, figures };
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
