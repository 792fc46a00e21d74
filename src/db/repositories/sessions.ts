import type { Queryable } from '../knex.js';
import { LIVE, type MarketsRow, type NewOrderSession, type OrderSessionsRow, type OrdersRow } from '../tables.js';

/**
 * Queries of order sessions (heartbeats) and order scoring. Decimal columns travel as strings (never
 * JavaScript numbers); the service converts them to exact units.
 *
 * Locking: a session row is locked (FOR UPDATE) before anything else of its account, and before any
 * market (the trading service then locks markets in id order, then balances), in every transaction that
 * renews, starts or expires a session. The expiry sweep skips rows another process holds (SKIP LOCKED).
 */

export async function insertSession(db: Queryable, session: NewOrderSession): Promise<OrderSessionsRow> {
  const [row] = await db<OrderSessionsRow>('order_sessions').insert(session).returning('*');
  return row!;
}

/** The account's open session (not yet expired by a sweep or a call), locked until the transaction ends. */
export async function lockOpenSession(db: Queryable, accountId: string): Promise<OrderSessionsRow | undefined> {
  return db<OrderSessionsRow>('order_sessions').where({ account_id: accountId }).whereNull('cancelled_at').forUpdate().first('*');
}

/** A session of this account by id (another account's is not found). */
export async function findSessionOfAccount(db: Queryable, accountId: string, sessionId: string): Promise<OrderSessionsRow | undefined> {
  return db<OrderSessionsRow>('order_sessions').where({ id: sessionId, account_id: accountId }).first('*');
}

/** The account's most recent session, open or not; undefined when it never started one. */
export async function findLatestSession(db: Queryable, accountId: string): Promise<OrderSessionsRow | undefined> {
  return db<OrderSessionsRow>('order_sessions')
    .where({ account_id: accountId })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .first('*');
}

export async function renewSession(db: Queryable, sessionId: string, renewal: { timeout_seconds: number; last_seen_at: Date; expires_at: Date }): Promise<OrderSessionsRow> {
  const [row] = await db<OrderSessionsRow>('order_sessions').where({ id: sessionId }).whereNull('cancelled_at').update(renewal).returning('*');
  if (!row) throw new Error(`order session ${sessionId} is not open`);
  return row;
}

/** Records the expiry of an open session: when, and how many orders it cancelled. */
export async function markSessionCancelled(db: Queryable, sessionId: string, cancelledAt: Date, cancelledCount: number): Promise<void> {
  const updated = await db('order_sessions').where({ id: sessionId }).whereNull('cancelled_at').update({ cancelled_at: cancelledAt, cancelled_count: cancelledCount });
  if (updated !== 1) throw new Error(`order session ${sessionId} was expired twice`);
}

/**
 * One open session past its expiry at `now`, locked, skipping those another transaction holds (another
 * process sweeping, or a heartbeat renewing it): so several sweepers never handle one session twice.
 */
export async function lockNextExpiredSession(db: Queryable, now: Date): Promise<OrderSessionsRow | undefined> {
  return db<OrderSessionsRow>('order_sessions')
    .whereNull('cancelled_at')
    .where('expires_at', '<=', now)
    .orderBy('expires_at')
    .limit(1)
    .forUpdate()
    .skipLocked()
    .first('*');
}

// --- order scoring

export type ScoringOrderRecord = Pick<OrdersRow, 'id' | 'market_id' | 'status' | 'remaining' | 'yes_price' | 'expiration_ts'> &
  Pick<MarketsRow, 'rewards_min_size' | 'rewards_max_spread'> & { market_status: MarketsRow['status'] };

/** These orders of the account (others' and unknown ids are simply absent), with their market's reward settings. */
export async function findOrdersForScoring(db: Queryable, accountId: string, orderIds: readonly string[]): Promise<ScoringOrderRecord[]> {
  if (orderIds.length === 0) return [];
  return db('orders as o')
    .join('markets as m', 'm.id', 'o.market_id')
    .where('o.account_id', accountId)
    .whereRaw('o.id = any(?::uuid[])', [[...orderIds]])
    .select(
      'o.id',
      'o.market_id',
      'o.status',
      db.raw('o.remaining::text as remaining'),
      db.raw('o.yes_price::text as yes_price'),
      'o.expiration_ts',
      'm.status as market_status',
      db.raw('m.rewards_min_size::text as rewards_min_size'),
      db.raw('m.rewards_max_spread::text as rewards_max_spread'),
    );
}

/** Best YES-frame bid and ask of each market (null when that side is empty), orders expired at `now` left out. */
export async function bestYesPrices(db: Queryable, marketIds: readonly string[], now: Date): Promise<Array<{ market_id: string; best_bid: string | null; best_ask: string | null }>> {
  if (marketIds.length === 0) return [];
  return db('orders')
    .whereRaw('market_id = any(?::bigint[])', [[...marketIds]])
    .whereRaw(LIVE)
    .where((w) => { w.whereNull('expiration_ts').orWhere('expiration_ts', '>', now); })
    .groupBy('market_id')
    .select(
      'market_id',
      db.raw(`(max(yes_price) filter (where book_side = 'bid'))::text as best_bid`),
      db.raw(`(min(yes_price) filter (where book_side = 'ask'))::text as best_ask`),
    );
}

export interface AccountOrderTotals {
  /** Live (OPEN, PARTIAL) orders. */
  open_orders: number;
  /** Live orders resting on the book (not past their expiration_ts) of ACTIVE markets. */
  scorable_orders: number;
  /** Distinct markets of those. */
  markets: number;
  /** Sum of price x remaining of the live orders, in Dots (up to six places). */
  open_notional: string;
}

export async function accountOrderTotals(db: Queryable, accountId: string, now: Date): Promise<AccountOrderTotals> {
  const result = await db.raw<{ rows: AccountOrderTotals[] }>(
    `select count(*)::int as open_orders,
            (count(*) filter (where s.resting))::int as scorable_orders,
            (count(distinct s.market_id) filter (where s.resting))::int as markets,
            coalesce(sum(s.price * s.remaining), 0)::text as open_notional
       from (select o.market_id, o.price, o.remaining,
                    (m.status = 'ACTIVE' and (o.expiration_ts is null or o.expiration_ts > ?)) as resting
               from orders o join markets m on m.id = o.market_id
              where o.account_id = ? and o.${LIVE}) s`,
    [now, accountId],
  );
  return result.rows[0]!;
}
