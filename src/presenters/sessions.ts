import type { HeartbeatView, ScoringStatusView } from '../domain/sessions/types.js';
import type { components } from '../generated/api-types.js';

type Schemas = components['schemas'];

/**
 * Wire shapes of order sessions and order scoring. The domain's views are already wire-shaped; these copy exactly the documented fields.
 */

export const presentHeartbeatSession = (session: HeartbeatView): Schemas['HeartbeatSession'] => ({
  heartbeat_id: session.heartbeat_id,
  status: session.status,
  timeout_seconds: session.timeout_seconds,
  last_seen_at: session.last_seen_at,
  expires_at: session.expires_at,
});

/** The order-book client's answer: `{status: "ok", heartbeat_id}`. */
export const presentHeartbeatAck = (session: HeartbeatView): Schemas['HeartbeatAck'] => ({
  status: 'ok',
  heartbeat_id: session.heartbeat_id,
});

export const presentScoringStatus = (status: ScoringStatusView): Schemas['OrderScoringStatus'] => ({
  user_id: status.user_id,
  requires_heartbeat: status.requires_heartbeat,
  order_scoring_enabled: status.order_scoring_enabled,
  heartbeat_active: status.heartbeat_active,
  open_orders: status.open_orders,
  scorable_orders: status.scorable_orders,
  markets: status.markets,
  open_notional: status.open_notional,
  heartbeat: status.heartbeat && {
    heartbeat_id: status.heartbeat.heartbeat_id,
    active: status.heartbeat.active,
    last_seen_at: status.heartbeat.last_seen_at,
    expires_at: status.heartbeat.expires_at,
    cancelled_at: status.heartbeat.cancelled_at,
    cancelled_count: status.heartbeat.cancelled_count,
    seconds_until_expiry: status.heartbeat.seconds_until_expiry,
  },
});

/** Each id as sent (once) mapped to whether it is scoring. */
export const presentScoringMap = (scoring: Map<string, boolean>): Schemas['OrdersScoringResult'] => Object.fromEntries(scoring);
