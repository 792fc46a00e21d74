import { availableParallelism } from 'node:os';
import path from 'node:path';
import { Decimal } from 'decimal.js';
import { DEFAULT_STAGE_DIR } from './db/embedded.js';

/** Settings read from the environment at start (README, "Environment"). */
export interface Config {
  port: number;
  host: string;
  /** Unset: an embedded PostgreSQL is started under `dataDir`. */
  databaseUrl: string | undefined;
  dataDir: string;
  /** Root only: where the embedded PostgreSQL's binaries (and a cluster the postgres user cannot reach in dataDir) are placed. */
  embeddedPgDir: string;
  seed: 'demo' | 'none';
  admin: { email: string; password: string } | undefined;
  /** Dots granted to a new account, a decimal string. */
  startingBalance: string;
  tokenTtlSecs: number;
  heartbeatTimeoutSecs: number;
  heartbeatSweepIntervalSecs: number;
  logLevel: LogLevel;
  /** HTTP worker processes sharing the port (1: the service runs in this process alone). */
  webConcurrency: number;
  /** Metrics, readiness, CORS and HTTP caching (README, "Observability and browsers"). */
  observability: ObservabilityConfig;
}

export interface ObservabilityConfig {
  /** Browser origins allowed to call the API (`*`: any origin, public reads only); empty: no CORS headers. */
  corsOrigins: string[];
  /** max-age of public catalogue reads' Cache-Control. */
  catalogueMaxAgeSecs: number;
  /** A listener of its own for GET /metrics (0: any free port); unset: none. */
  metricsPort: number | undefined;
  /** GET /metrics on the main port for a request bearing this token; unset: not served there. */
  metricsToken: string | undefined;
  /** After SIGTERM, how long /readyz answers 503 while requests are still taken, before the listener closes. */
  shutdownDelaySecs: number;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
/** More workers than this is a typo, not a deployment: each holds its own database connections. */
const MAX_WEB_CONCURRENCY = 64;

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

function databaseUrl(env: Env): string | undefined {
  const raw = env.DATABASE_URL?.trim();
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('DATABASE_URL must be a URL such as postgres://user:password@host:5432/database');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ConfigError(`DATABASE_URL must start with postgres:// or postgresql://, got '${url.protocol}//'`);
  }
  if (!url.hostname && !url.searchParams.get('host')) throw new ConfigError('DATABASE_URL names no host');
  return raw;
}

function webConcurrency(env: Env): number {
  const raw = env.WEB_CONCURRENCY?.trim();
  if (raw === 'auto') return availableParallelism();
  if (raw === undefined || raw === '') return 1;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_WEB_CONCURRENCY) {
    throw new ConfigError(`WEB_CONCURRENCY must be 'auto' or a whole number from 1 to ${MAX_WEB_CONCURRENCY}, got '${raw}'`);
  }
  return Number(raw);
}

/** An origin as browsers send it: scheme, host and optional port, nothing else. */
const ORIGIN = /^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$|^https?:\/\/\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;
const MIN_METRICS_TOKEN_LENGTH = 16;

function corsOrigins(env: Env): string[] {
  const raw = env.CORS_ORIGINS?.trim();
  if (!raw) return [];
  const origins = raw.split(',').map((origin) => origin.trim());
  for (const origin of origins) {
    if (origin !== '*' && !ORIGIN.test(origin)) {
      throw new ConfigError(`CORS_ORIGINS must be '*' or origins such as https://app.example.com:8443 separated by commas (no path, no trailing slash), got '${origin}'`);
    }
  }
  return [...new Set(origins)];
}

function observability(env: Env, port: number): ObservabilityConfig {
  const metricsPortSet = Boolean(env.METRICS_PORT?.trim());
  const metricsPort = metricsPortSet ? integer(env, 'METRICS_PORT', 0, 0, 65535) : undefined;
  if (metricsPort !== undefined && metricsPort !== 0 && metricsPort === port) throw new ConfigError(`METRICS_PORT must differ from PORT (${port})`);
  const metricsToken = env.METRICS_TOKEN?.trim() || undefined;
  if (metricsToken !== undefined && !/^[A-Za-z0-9._~+/=-]+$/.test(metricsToken)) {
    throw new ConfigError('METRICS_TOKEN may hold only letters, digits and . _ ~ + / = - (it is sent as a bearer token)');
  }
  if (metricsToken !== undefined && metricsToken.length < MIN_METRICS_TOKEN_LENGTH) {
    throw new ConfigError(`METRICS_TOKEN must have at least ${MIN_METRICS_TOKEN_LENGTH} characters`);
  }
  return {
    corsOrigins: corsOrigins(env),
    catalogueMaxAgeSecs: integer(env, 'CATALOGUE_CACHE_MAX_AGE_SECS', 5, 0, 86400),
    metricsPort,
    metricsToken,
    shutdownDelaySecs: integer(env, 'SHUTDOWN_DELAY_SECS', 0, 0, 60),
  };
}

function logLevel(env: Env): LogLevel {
  const raw = env.LOG_LEVEL?.trim() || 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(raw)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got '${raw}'`);
  return raw as LogLevel;
}

export function loadConfig(env: Env = process.env): Config {
  checkFeesAreZero(env);
  const database = databaseUrl(env);
  // Demo data (with its published passwords) goes into the embedded database only, unless asked for by name.
  const seed = env.SEED?.trim() || (database ? 'none' : 'demo');
  if (seed !== 'demo' && seed !== 'none') throw new ConfigError(`SEED must be 'demo' or 'none', got '${seed}'`);
  const embeddedPgDir = env.EMBEDDED_PG_DIR?.trim() || DEFAULT_STAGE_DIR;
  if (!path.isAbsolute(embeddedPgDir)) throw new ConfigError(`EMBEDDED_PG_DIR must be an absolute path, got '${embeddedPgDir}'`);

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

  const port = integer(env, 'PORT', 3000, 0, 65535);
  return {
    port,
    host: env.HOST?.trim() || '127.0.0.1',
    databaseUrl: database,
    dataDir: env.DATA_DIR?.trim() || './.data',
    embeddedPgDir,
    seed,
    admin: adminEmail && adminPassword ? { email: adminEmail, password: adminPassword } : undefined,
    startingBalance,
    tokenTtlSecs: integer(env, 'TOKEN_TTL_SECS', 30 * 24 * 3600, 60, 365 * 24 * 3600),
    heartbeatTimeoutSecs: integer(env, 'ORDER_HEARTBEAT_TIMEOUT_SECS', 15, 1, 3600),
    heartbeatSweepIntervalSecs: integer(env, 'ORDER_HEARTBEAT_SWEEP_INTERVAL_SECS', 1, 0, 3600),
    logLevel: logLevel(env),
    webConcurrency: webConcurrency(env),
    observability: observability(env, port),
  };
}
