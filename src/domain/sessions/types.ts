/**
 * What the order-session service gives: the wire shapes of the heartbeat and of order scoring (snake_case,
 * `Z` timestamps, decimal strings).
 */

/** A live order session, as a heartbeat answers it. */
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

/** Whether an account's orders may score now, and what it has resting. */
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
