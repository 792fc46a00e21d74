import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/knex.js';
import * as repo from '../../db/repositories/sessions.js';
import type { OrderSessionsRow } from '../../db/tables.js';
import { clip, conflict, invalid } from '../errors.js';
import { cancelAccountOrders } from '../trading/commands/cancel.js';
import { orderIdOf } from '../trading/input.js';
import { formatMicroDots, parseScaled } from '../trading/money.js';
import type { TradingTransaction, TradingTransactions } from '../trading/transaction.js';
import { isScoring, type BookTop } from './scoring.js';
import type { HeartbeatView, ScoringStatusView, SessionStatusView } from './types.js';

export interface OrderSessionOptions {
  /** ORDER_HEARTBEAT_TIMEOUT_SECS: a session expires this long after its last heartbeat. */
  timeoutSecs: number;
  /** The clock (tests move it); defaults to the system clock. */
  now?: () => Date;
}

/** Most ids one scoring request may name. */
export const MAX_SCORING_IDS = 1000;

const UNIQUE_VIOLATION = '23505';
const OPEN_SESSION_INDEX = 'order_sessions_account_open';
/** A start that lost a race with a concurrent start of the same account retries, and then renews. */
const START_ATTEMPTS = 3;

type HeartbeatOutcome = { kind: 'live'; session: OrderSessionsRow } | { kind: 'expired' } | { kind: 'unknown' };

const iso = (date: Date) => date.toISOString();
const isOpenAndAhead = (session: OrderSessionsRow, now: Date) => session.cancelled_at === null && session.expires_at.getTime() > now.getTime();

/**
 * Order sessions and order scoring. A client that sends heartbeats has its resting orders cancelled when
 * they stop: its session expires `timeoutSecs` after the last one.
 *
 * Heartbeat, for the caller's account, in one transaction that first locks the account's open session:
 * - no id (omitted, null or empty): renews the open session while it is live; otherwise starts one;
 * - the id of the live session: renews it (`last_seen_at` now, `expires_at` now + the timeout);
 * - the id of one of the account's expired sessions: refused (409), so the client learns that its orders
 *   were cancelled; nothing else changes;
 * - any other id (unknown, malformed, another account's): refused (400); nothing changes.
 * An open session found past `expires_at` (the sweep has not reached it yet) is expired first, in that
 * same transaction: the account's resting orders are cancelled and `cancelled_at`, `cancelled_count` set.
 *
 * Expiry (the sweep, `expireSessions`): each open session past `expires_at` is locked with SKIP LOCKED,
 * its account's live orders cancelled through trading's cancel path (reason 'heartbeat'), and the session
 * marked in the same transaction; so with any number of processes, each is handled once. Every transaction
 * here is a trading transaction (`trading`), so that what trading does after a commit follows it.
 */
export class OrderSessionService {
  private readonly now: () => Date;
  private readonly timeoutSecs: number;

  constructor(
    private readonly db: Db,
    private readonly trading: TradingTransactions,
    options: OrderSessionOptions,
  ) {
    if (!Number.isInteger(options.timeoutSecs) || options.timeoutSecs <= 0) throw new RangeError(`timeoutSecs must be a positive integer, got ${options.timeoutSecs}`);
    this.timeoutSecs = options.timeoutSecs;
    this.now = options.now ?? (() => new Date());
  }

  // --- heartbeat

  async heartbeat(accountId: string, heartbeatId: string | null | undefined): Promise<HeartbeatView> {
    const wanted = heartbeatId === undefined || heartbeatId === null || heartbeatId === '' ? undefined : heartbeatId;
    // Not an id this service ever gives (a UUID): unknown without looking.
    if (wanted !== undefined && orderIdOf(wanted) === undefined) throw unknownSession(wanted);
    const id = wanted === undefined ? undefined : orderIdOf(wanted)!;

    for (let attempt = 1; ; attempt += 1) {
      let outcome: HeartbeatOutcome;
      try {
        outcome = await this.trading.run(async (transaction) => {
          const { tx } = transaction;
          const now = this.now();
          let open = await repo.lockOpenSession(tx, accountId);
          if (open && !isOpenAndAhead(open, now)) {
            const wasNamed = open.id === id;
            await this.expireLocked(transaction, open);
            open = undefined;
            if (wasNamed) return { kind: 'expired' };
          }
          if (id !== undefined && open?.id !== id) {
            return (await repo.findSessionOfAccount(tx, accountId, id)) ? { kind: 'expired' } : { kind: 'unknown' };
          }
          const timing = { timeout_seconds: this.timeoutSecs, last_seen_at: now, expires_at: new Date(now.getTime() + this.timeoutSecs * 1000) };
          if (open) return { kind: 'live', session: await repo.renewSession(tx, open.id, timing) };
          return { kind: 'live', session: await repo.insertSession(tx, { id: randomUUID(), account_id: accountId, ...timing }) };
        });
      } catch (error) {
        const { code, constraint } = error as { code?: string; constraint?: string };
        if (code === UNIQUE_VIOLATION && constraint === OPEN_SESSION_INDEX && attempt < START_ATTEMPTS) continue;
        throw error;
      }
      if (outcome.kind === 'expired') {
        throw conflict(`heartbeat_id '${clip(wanted, 40)}' names an expired order session: its resting orders were cancelled; send an empty heartbeat_id to start a new session`);
      }
      if (outcome.kind === 'unknown') throw unknownSession(wanted!);
      return heartbeatView(outcome.session);
    }
  }

  /**
   * Expires every open session past `expires_at`, each in its own transaction (see the class comment).
   * Returns how many this call expired. Sessions another process is handling are skipped, not waited for.
   */
  async expireSessions(): Promise<number> {
    let expired = 0;
    for (;;) {
      const found = await this.trading.run(async (transaction) => {
        const session = await repo.lockNextExpiredSession(transaction.tx, this.now());
        if (session) await this.expireLocked(transaction, session);
        return session !== undefined;
      });
      if (!found) return expired;
      expired += 1;
    }
  }

  // --- order scoring

  /**
   * Whether the caller's orders may score now and what it has resting, with its latest session (an open
   * session found past its expiry is expired first).
   */
  async scoringStatus(accountId: string): Promise<ScoringStatusView> {
    let latest = await repo.findLatestSession(this.db, accountId);
    if (latest && latest.cancelled_at === null && !isOpenAndAhead(latest, this.now())) {
      await this.expireDue(accountId);
      latest = await repo.findLatestSession(this.db, accountId);
    }
    const now = this.now();
    const totals = await repo.accountOrderTotals(this.db, accountId, now);
    const active = latest !== undefined && isOpenAndAhead(latest, now);
    const notional = parseScaled(totals.open_notional, 6);
    if (notional === undefined) throw new Error(`unexpected open notional ${totals.open_notional}`);
    return {
      user_id: accountId,
      requires_heartbeat: latest !== undefined,
      order_scoring_enabled: latest === undefined || active,
      heartbeat_active: active,
      open_orders: totals.open_orders,
      scorable_orders: totals.scorable_orders,
      markets: totals.markets,
      // Money in micro-Dots (price x count is exact there), shown with eight places.
      open_notional: `${formatMicroDots(notional, 6)}00`,
      heartbeat: latest ? sessionStatusView(latest, now) : null,
    };
  }

  /**
   * Whether each order is scoring (scoring.ts says when), by the id as sent. Unknown, malformed and other
   * accounts' ids are false. At most MAX_SCORING_IDS ids (400 above).
   */
  async ordersScoring(accountId: string, orderIds: readonly string[]): Promise<Map<string, boolean>> {
    if (orderIds.length > MAX_SCORING_IDS) {
      throw invalid(`at most ${MAX_SCORING_IDS} order ids per request, got ${orderIds.length}`, [{ path: 'order_ids', message: `more than ${MAX_SCORING_IDS} ids` }]);
    }
    const now = this.now();
    const ids = [...new Set(orderIds.flatMap((raw) => orderIdOf(raw) ?? []))];
    const rows = await repo.findOrdersForScoring(this.db, accountId, ids);
    const tops = new Map<string, BookTop>(
      (await repo.bestYesPrices(this.db, [...new Set(rows.map((r) => String(r.market_id)))], now)).map((t) => [String(t.market_id), { bestBid: t.best_bid, bestAsk: t.best_ask }]),
    );
    const latest = rows.length > 0 ? await repo.findLatestSession(this.db, accountId) : undefined;
    const heartbeatAllows = latest === undefined || isOpenAndAhead(latest, now);
    const byId = new Map(rows.map((r) => [r.id, r]));
    const result = new Map<string, boolean>();
    for (const raw of orderIds) {
      const id = orderIdOf(raw);
      const row = id ? byId.get(id) : undefined;
      const top = row ? (tops.get(String(row.market_id)) ?? { bestBid: null, bestAsk: null }) : undefined;
      result.set(
        raw,
        row !== undefined &&
          isScoring(
            {
              status: row.status,
              remaining: row.remaining,
              yesPrice: row.yes_price,
              expiration: row.expiration_ts,
              marketStatus: row.market_status,
              rewardsMinSize: row.rewards_min_size,
              rewardsMaxSpread: row.rewards_max_spread,
            },
            top!,
            heartbeatAllows,
            now,
          ),
      );
    }
    return result;
  }

  // --- internals

  /** Expires the account's open session if it is past its expiry (re-checked under its lock). */
  private async expireDue(accountId: string): Promise<void> {
    await this.trading.run(async (transaction) => {
      const now = this.now();
      const open = await repo.lockOpenSession(transaction.tx, accountId);
      if (open && !isOpenAndAhead(open, now)) await this.expireLocked(transaction, open);
    });
  }

  /** Cancels the resting orders of a locked open session's account and marks the session expired. */
  private async expireLocked(transaction: TradingTransaction, session: OrderSessionsRow): Promise<void> {
    const cancelled = await cancelAccountOrders(transaction, session.account_id, 'heartbeat');
    // When the cancel was done (it commits with this row, so nothing of it is visible earlier).
    await repo.markSessionCancelled(transaction.tx, session.id, this.now(), cancelled);
  }
}

function heartbeatView(session: OrderSessionsRow): HeartbeatView {
  return {
    heartbeat_id: session.id,
    status: 'active',
    timeout_seconds: session.timeout_seconds,
    last_seen_at: iso(session.last_seen_at),
    expires_at: iso(session.expires_at),
  };
}

function sessionStatusView(session: OrderSessionsRow, now: Date): SessionStatusView {
  const active = isOpenAndAhead(session, now);
  return {
    heartbeat_id: session.id,
    active,
    last_seen_at: iso(session.last_seen_at),
    expires_at: iso(session.expires_at),
    cancelled_at: session.cancelled_at ? iso(session.cancelled_at) : null,
    cancelled_count: session.cancelled_count,
    seconds_until_expiry: active ? Math.ceil((session.expires_at.getTime() - now.getTime()) / 1000) : 0,
  };
}

function unknownSession(id: string) {
  return invalid(`heartbeat_id '${clip(id, 40)}' names no order session of this account; send an empty heartbeat_id to start one`, [
    { location: 'body', path: 'heartbeat_id', message: 'unknown heartbeat_id' },
  ]);
}
