import { DIRECT_CLIENTS, type ClientAddressing } from '../config.js';
import type { ApiKeyService } from '../domain/api-keys/service.js';
import type { FixedWindows } from '../admission/rate-limit.js';

/**
 * `GET /ws`: the real-time feed's WebSocket endpoint on the service's own HTTP server (transport only:
 * commands and subscriptions are the feed's sessions, src/domain/feed/).
 *
 * - Upgrade: taken first from the client address's upgrade budget (429 beyond), before any credential is
 *   checked; then `Authorization: Bearer <token>` authenticates the connection (an invalid one is answered
 *   401 and never upgraded), or an RSA API key's KALSHI-ACCESS-* headers signed for `GET <path>` (401 when
 *   refused, 403 without the `read` scope); without either only public channels can be subscribed (or an
 *   `auth` command later). A connection opened with a key is closed when the key is revoked.
 * - Frames: text, JSON, each taken from the client address's command budget (beyond: an error, and the
 *   frame is not run); a command frame above `maxCommandBytes` is answered with an error and ignored;
 *   frames above `maxFrameBytes` close the connection (1009).
 * - Ping every `pingIntervalMs` (10 s): a connection that did not answer the previous ping is dropped.
 * - Back-pressure: a connection whose unsent data passes `maxBufferedBytes` is sent an error and closed
 *   (and destroyed `closeGraceMs` later if it still does not read): memory per connection stays bounded.
 */
export interface RealtimeOptions {
  path: string;
  pingIntervalMs: number;
  maxBufferedBytes: number;
  maxCommandBytes: number;
  maxFrameBytes: number;
  closeGraceMs: number;
  /** How often an authenticated connection's token is checked again (revoked or expired: closed). */
  revalidateIntervalMs: number;
  /** Connections open at once; more are answered 503. */
  maxConnections: number;
  /** Connections open at once from one client address; a further one is sent an error and closed. */
  maxConnectionsPerAddress: number;
  /** Order-book snapshots (markets named by orderbook_delta subscribes) per second from one client address. */
  snapshotsPerSec: number;
  /** How client addresses are told (see clientAddress). */
  clients: ClientAddressing;
  /** Upgrades per client address, taken before any token or signature is checked; none: not limited. */
  upgradeBudget?: FixedWindows;
  /** Command frames per client address, over all its connections; none: not limited. */
  commandBudget?: FixedWindows;
  /** Checks KALSHI-ACCESS-* upgrade headers; without it they are not accepted (401). */
  apiKeys?: Pick<ApiKeyService, 'checkRsa' | 'firstUse'>;
  /** Metrics: a message was sent; a slow consumer was cut off. */
  onMessageSent?: () => void;
  onSlowConsumer?: () => void;
}

export const DEFAULT_REALTIME_OPTIONS: RealtimeOptions = {
  path: '/ws',
  pingIntervalMs: 10_000,
  maxBufferedBytes: 4 * 1024 * 1024,
  maxCommandBytes: 16 * 1024,
  maxFrameBytes: 1024 * 1024,
  closeGraceMs: 5000,
  revalidateIntervalMs: 60_000,
  maxConnections: 10_000,
  maxConnectionsPerAddress: 50,
  snapshotsPerSec: 200,
  clients: DIRECT_CLIENTS,
};
