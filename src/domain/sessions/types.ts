/**
 * What the order-session service takes and gives: the wire shapes of the heartbeat (specification 2.3) and
 * of order scoring (2.4 and the scoring checks of 4.1): snake_case, `Z` timestamps, decimal strings.
 */
import type { Queryable } from '../../db/knex.js';
import type { AfterCommit } from '../after-commit.js';

/** Specification 2.3. */
export interface HeartbeatView {
  heartbeat_id: string;
  status: 'active';
  timeout_seconds: number;
  last_seen_at: string;
  expires_at: string;
}

/** The account's latest session, as the scoring status shows it. */
export interface SessionStatusView {
  heartbeat_id: string;
  /** Open and not past `expires_at`. */
  active: boolean;
  last_seen_at: string;
  expires_at: string;
  cancelled_at: string | null;
  cancelled_count: number;
  /** Whole seconds left (rounded up), 0 once expired. */
  seconds_until_expiry: number;
}

/** Specification 2.4. */
export interface ScoringStatusView {
  user_id: string;
  /** The account has started a heartbeat session, so its orders score only while a session is live. */
  requires_heartbeat: boolean;
  /** The account's orders may score now: no heartbeat required, or the session is live. */
  order_scoring_enabled: boolean;
  heartbeat_active: boolean;
  open_orders: number;
  scorable_orders: number;
  markets: number;
  /** Eight decimal places. */
  open_notional: string;
  /** Null when the account never started a session. */
  heartbeat: SessionStatusView | null;
}

/**
 * The part of the trading service order sessions need: cancelling an account's live orders inside the
 * session's transaction, through the normal cancel path, and what follows once that transaction committed.
 */
export interface AccountOrderCanceller {
  cancelLiveOrdersInTransaction(tx: Queryable, accountId: string, reason: 'heartbeat'): Promise<{ cancelled: number; afterCommit: AfterCommit }>;
  committed(afterCommit: AfterCommit): Promise<void>;
}
