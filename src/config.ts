import { availableParallelism } from 'node:os';
import { Decimal } from 'decimal.js';

/** Settings read from the environment at start (README, "Environment"). */
export interface Config {
  port: number;
  host: string;
  /** Unset: an embedded PostgreSQL is started under `dataDir`. */
  databaseUrl: string | undefined;
  dataDir: string;
  seed: 'demo' | 'none';
  admin: { email: string; password: string } | undefined;
  /** Dots granted to a new account, a decimal string. */
  startingBalance: string;
  tokenTtlSecs: number;
  heartbeatTimeoutSecs: number;
  heartbeatSweepIntervalSecs: number;
  logLevel: string;
  /** Abuse controls (README, "Abuse controls"): rate limits, login back-off, hashing queue, feed caps. */
  abuse: AbuseConfig;
}

export class ConfigError extends Error {}

/**
 * The service is fee-free and fail-closed: any of these set to a non-zero value refuses to start, so that
 * an operator never believes fees are charged when they are not.
 */
export const FEE_SETTINGS = [
  'PLATFORM_MAKER_FEE_BPS',
  'PLATFORM_TAKER_FEE_BPS',
  'BUILDER_MAKER_FEE_BPS',
  'BUILDER_TAKER_FEE_BPS',
  'SIGNED_ORDER_FEE_BPS',
] as const;

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  if (!/^-?\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got '${raw}'`);
  }
  return Number(raw);
}

function checkFeesAreZero(env: Env): void {
  for (const name of FEE_SETTINGS) {
    const raw = env[name]?.trim();
    if (raw === undefined || raw === '') continue;
    let isZero = false;
    try {
      isZero = new Decimal(raw).isZero();
    } catch {
      throw new ConfigError(`${name} must be 0 (the exchange is fee-free), got '${raw}'`);
    }
    if (!isZero) {
      throw new ConfigError(`${name}=${raw} is refused: the exchange runs a fee-free profile and every fee must be 0`);
    }
  }
}

export function loadConfig(env: Env = process.env): Config {
  checkFeesAreZero(env);
  const seed = env.SEED?.trim() || 'demo';
  if (seed !== 'demo' && seed !== 'none') throw new ConfigError(`SEED must be 'demo' or 'none', got '${seed}'`);

  const startingBalance = env.STARTING_BALANCE?.trim() || '1000';
  if (!/^\d+(\.\d{1,8})?$/.test(startingBalance)) {
    throw new ConfigError(`STARTING_BALANCE must be a non-negative decimal with at most 8 places, got '${startingBalance}'`);
  }

  const adminEmail = env.ADMIN_EMAIL?.trim();
  const adminPassword = env.ADMIN_PASSWORD;
  if (Boolean(adminEmail) !== Boolean(adminPassword)) {
    throw new ConfigError('ADMIN_EMAIL and ADMIN_PASSWORD must be set together');
  }
  if (adminPassword !== undefined && adminPassword.length < 8) {
    throw new ConfigError('ADMIN_PASSWORD must have at least 8 characters');
  }

  return {
    port: integer(env, 'PORT', 3000, 0, 65535),
    host: env.HOST?.trim() || '127.0.0.1',
    databaseUrl: env.DATABASE_URL?.trim() || undefined,
    dataDir: env.DATA_DIR?.trim() || './.data',
    seed,
    admin: adminEmail && adminPassword ? { email: adminEmail, password: adminPassword } : undefined,
    startingBalance,
    tokenTtlSecs: integer(env, 'TOKEN_TTL_SECS', 30 * 24 * 3600, 60, 365 * 24 * 3600),
    heartbeatTimeoutSecs: integer(env, 'ORDER_HEARTBEAT_TIMEOUT_SECS', 15, 1, 3600),
    heartbeatSweepIntervalSecs: integer(env, 'ORDER_HEARTBEAT_SWEEP_INTERVAL_SECS', 1, 0, 3600),
    logLevel: env.LOG_LEVEL?.trim() || 'info',
    abuse: loadAbuseConfig(env),
  };
}

// --- abuse controls ---------------------------------------------------------------------------------

/** The rate-limit classes: every operation belongs to one (its `x-rate-limit`). */
export const RATE_LIMIT_CLASSES = ['public-reads', 'private-reads', 'order-writes', 'login', 'registration'] as const;
export type RateLimitClass = (typeof RATE_LIMIT_CLASSES)[number];

/** A budget: `points` requests per `durationSecs` window, per client (account, else address). */
export interface RateBudget {
  points: number;
  durationSecs: number;
}

export interface AbuseConfig {
  /** RATE_LIMITS=off turns the request budgets off (not the login back-off or the hashing queue). */
  rateLimits: boolean;
  /** Take the client address from the last X-Forwarded-For entry (behind a proxy). */
  trustProxy: boolean;
  budgets: Record<RateLimitClass, RateBudget>;
  /** Worker processes sharing one address and port (WEB_CONCURRENCY): each allows its share of a budget. */
  processes: number;
  login: { freeFailures: number; backoffBaseMs: number; backoffMaxSecs: number };
  passwordHashing: { concurrency: number; queue: number };
  requestBodyTimeoutMs: number;
  realtime: { maxConnectionsPerAddress: number; maxSubscriptions: number; snapshotsPerSec: number };
}

const BUDGET_SETTINGS: Record<RateLimitClass, [name: string, fallback: string]> = {
  'public-reads': ['RATE_LIMIT_PUBLIC_READS', '100/1'],
  'private-reads': ['RATE_LIMIT_PRIVATE_READS', '100/1'],
  'order-writes': ['RATE_LIMIT_ORDER_WRITES', '50/1'],
  login: ['RATE_LIMIT_LOGIN', '20/60'],
  registration: ['RATE_LIMIT_REGISTRATION', '5/3600'],
};

function budget(env: Env, name: string, fallback: string): RateBudget {
  const raw = env[name]?.trim() || fallback;
  const match = /^(\d{1,9})\/(\d{1,7})$/.exec(raw);
  const points = Number(match?.[1]);
  const durationSecs = Number(match?.[2]);
  if (!match || points < 1 || durationSecs < 1 || durationSecs > 86_400) {
    throw new ConfigError(`${name} must be <requests>/<seconds> (e.g. 100/1; at least 1 request, 1 to 86400 seconds), got '${raw}'`);
  }
  return { points, durationSecs };
}

function onOff(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['on', 'true', '1', 'yes'].includes(raw)) return true;
  if (['off', 'false', '0', 'no'].includes(raw)) return false;
  throw new ConfigError(`${name} must be on or off, got '${env[name]}'`);
}

export function loadAbuseConfig(env: Env): AbuseConfig {
  const budgets = Object.fromEntries(RATE_LIMIT_CLASSES.map((c) => [c, budget(env, ...BUDGET_SETTINGS[c])])) as Record<RateLimitClass, RateBudget>;
  // WEB_CONCURRENCY itself is checked with the other process settings; here only its count is read
  // ('auto': one worker per core).
  const rawWorkers = env.WEB_CONCURRENCY?.trim();
  const workers = rawWorkers === 'auto' ? Math.min(64, availableParallelism()) : Number(rawWorkers);
  return {
    rateLimits: onOff(env, 'RATE_LIMITS', true),
    trustProxy: onOff(env, 'TRUST_PROXY', false),
    budgets,
    processes: Number.isSafeInteger(workers) && workers > 1 ? workers : 1,
    login: {
      freeFailures: integer(env, 'LOGIN_FREE_FAILURES', 5, 1, 1000),
      backoffBaseMs: integer(env, 'LOGIN_BACKOFF_BASE_MS', 1000, 1, 3_600_000),
      backoffMaxSecs: integer(env, 'LOGIN_BACKOFF_MAX_SECS', 900, 1, 86_400),
    },
    passwordHashing: {
      concurrency: integer(env, 'PASSWORD_HASH_CONCURRENCY', 1, 1, 64),
      queue: integer(env, 'PASSWORD_HASH_QUEUE', 0, 0, 100_000),
    },
    requestBodyTimeoutMs: integer(env, 'REQUEST_BODY_TIMEOUT_MS', 30_000, 100, 600_000),
    realtime: {
      maxConnectionsPerAddress: integer(env, 'WS_MAX_CONNECTIONS_PER_ADDRESS', 50, 1, 1_000_000),
      maxSubscriptions: integer(env, 'WS_MAX_SUBSCRIPTIONS', 100, 1, 10_000),
      snapshotsPerSec: integer(env, 'WS_SNAPSHOTS_PER_SEC', 200, 1, 1_000_000),
    },
  };
}
