import { BlockList, isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { Decimal } from 'decimal.js';

/** EMBEDDED_PG_DIR when unset (run as root only: see src/db/embedded.ts). */
export const DEFAULT_STAGE_DIR = '/var/lib/dots-exchange';

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
  /** Sign-in through an OpenID Connect provider; undefined (the default): off, and no provider is ever contacted. */
  oidc?: OidcConfig | undefined;
  /** Abuse controls (README, "Abuse controls"): rate limits, login back-off, hashing queue, feed caps. */
  abuse: AbuseConfig;
  /** Metrics, readiness, CORS and HTTP caching (README, "Observability and browsers"). */
  observability: ObservabilityConfig;
  /** API keys and signed requests (README, "API keys for bots"). */
  apiKeys: ApiKeysConfig;
}

export interface ApiKeysConfig {
  /** API_KEY_ENCRYPTION_KEY: seals order-book secrets (32 bytes); unset: generated into DATA_DIR with the embedded database. */
  encryptionKey: Buffer | undefined;
  /** A signature's timestamp must be within this many seconds of the server's clock. */
  windowSecs: number;
}

export interface OidcConfig {
  /** The issuer identifier, exactly as the provider's ID tokens carry it in `iss`. */
  issuer: string;
  /** This service's client id at the provider: the audience its ID tokens must name. */
  clientId: string;
  /** For the code-flow exchange (token endpoint authentication) and HS* signatures. */
  clientSecret: string | undefined;
  /** JWS algorithms accepted on ID tokens. */
  allowedAlgs: string[];
  /** Time allowed for each request to the provider (discovery, keys, token endpoint). */
  timeoutSecs: number;
  /** Least time between two fetches of the provider's keys caused by a token signed with an unknown key. */
  jwksCooldownSecs: number;
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
    let isZero: boolean;
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
  if (raw === 'auto') return Math.min(MAX_WEB_CONCURRENCY, availableParallelism());
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

/** 32 bytes, as 64 hexadecimal digits or base64 (standard or URL-safe). */
function encryptionKey(env: Env): Buffer | undefined {
  const raw = env.API_KEY_ENCRYPTION_KEY?.trim();
  if (!raw) return undefined;
  let key: Buffer | undefined;
  if (/^[0-9a-fA-F]{64}$/.test(raw)) key = Buffer.from(raw, 'hex');
  else if (/^[A-Za-z0-9+/_-]{43}=?$/.test(raw)) key = Buffer.from(raw.replaceAll('-', '+').replaceAll('_', '/'), 'base64');
  if (key?.length !== 32) {
    throw new ConfigError('API_KEY_ENCRYPTION_KEY must be 32 random bytes as 64 hexadecimal digits or base64 (e.g. the output of: openssl rand -hex 32)');
  }
  return key;
}

function logLevel(env: Env): LogLevel {
  const raw = env.LOG_LEVEL?.trim() || 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(raw)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got '${raw}'`);
  return raw as LogLevel;
}

/** Asymmetric algorithms verified against the provider's published keys. */
export const OIDC_KEY_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'] as const;
/** Algorithms keyed by the client secret. */
export const OIDC_SECRET_ALGS = ['HS256', 'HS384', 'HS512'] as const;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * OIDC_* settings. All unset: sign-in through a provider is off. A plain-http issuer is accepted on a
 * loopback host only (a provider on the same machine); anywhere else its keys could be replaced in transit.
 */
function oidcConfig(env: Env): OidcConfig | undefined {
  const issuer = env.OIDC_ISSUER?.trim();
  const clientId = env.OIDC_CLIENT_ID?.trim();
  const clientSecret = env.OIDC_CLIENT_SECRET || undefined;
  const algs = env.OIDC_ALLOWED_ALGS?.trim();
  if (!issuer) {
    const stray = ['OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET', 'OIDC_ALLOWED_ALGS', 'OIDC_TIMEOUT_SECS', 'OIDC_JWKS_COOLDOWN_SECS'].filter((name) => env[name]?.trim());
    if (stray.length > 0) throw new ConfigError(`${stray.join(', ')} set without OIDC_ISSUER: set OIDC_ISSUER to sign in through a provider, or unset them`);
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new ConfigError(`OIDC_ISSUER must be the provider's issuer URL (https://...), got '${issuer}'`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) {
    throw new ConfigError(`OIDC_ISSUER must be an https:// URL (plain http:// only on a loopback host), got '${issuer}'`);
  }
  if (url.search || url.hash || url.username || url.password) throw new ConfigError(`OIDC_ISSUER must have no query, fragment or credentials, got '${issuer}'`);
  if (!clientId) throw new ConfigError('OIDC_CLIENT_ID must be set with OIDC_ISSUER (the client id of this service at the provider)');
  const allowedAlgs = (algs || 'RS256').split(',').map((alg) => alg.trim()).filter(Boolean);
  const known: readonly string[] = [...OIDC_KEY_ALGS, ...OIDC_SECRET_ALGS];
  for (const alg of allowedAlgs) {
    if (!known.includes(alg)) throw new ConfigError(`OIDC_ALLOWED_ALGS: '${alg}' is not accepted; choose among ${known.join(', ')}`);
    if ((OIDC_SECRET_ALGS as readonly string[]).includes(alg) && !clientSecret) {
      throw new ConfigError(`OIDC_ALLOWED_ALGS: ${alg} is keyed by the client secret, and OIDC_CLIENT_SECRET is not set`);
    }
  }
  if (allowedAlgs.length === 0) throw new ConfigError('OIDC_ALLOWED_ALGS names no algorithm');
  return {
    issuer,
    clientId,
    clientSecret,
    allowedAlgs: [...new Set(allowedAlgs)],
    timeoutSecs: integer(env, 'OIDC_TIMEOUT_SECS', 5, 1, 60),
    jwksCooldownSecs: integer(env, 'OIDC_JWKS_COOLDOWN_SECS', 30, 1, 3600),
  };
}

export function loadConfig(env: Env = process.env): Config {
  checkFeesAreZero(env);
  const database = databaseUrl(env);
  // Demo data (with its published passwords) goes into the embedded database only, unless asked for by name.
  const seed = env.SEED?.trim() || (database ? 'none' : 'demo');
  if (seed !== 'demo' && seed !== 'none') throw new ConfigError(`SEED must be 'demo' or 'none', got '${seed}'`);
  const embeddedPgDir = env.EMBEDDED_PG_DIR?.trim() || DEFAULT_STAGE_DIR;
  if (!path.isAbsolute(embeddedPgDir)) throw new ConfigError(`EMBEDDED_PG_DIR must be an absolute path, got '${embeddedPgDir}'`);

  const workers = webConcurrency(env);

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
    webConcurrency: workers,
    oidc: oidcConfig(env),
    abuse: loadAbuseConfig(env, workers),
    observability: observability(env, port),
    apiKeys: {
      encryptionKey: encryptionKey(env),
      windowSecs: integer(env, 'API_KEY_SIGNATURE_WINDOW_SECS', 30, 5, 300),
    },
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

/** How a request's client is told: through which proxies, and how much of an IPv6 address names one client. */
export interface ClientAddressing {
  /** The proxies whose X-Forwarded-For entries are believed (TRUST_PROXY); undefined: none, the socket's address counts. */
  trustedProxies: BlockList | undefined;
  /** IPv6 clients are counted per network of this prefix length (CLIENT_IPV6_PREFIX_LENGTH). */
  ipv6PrefixLength: number;
}

/** No proxy trusted, IPv6 clients counted per /64 (the defaults). */
export const DIRECT_CLIENTS: ClientAddressing = { trustedProxies: undefined, ipv6PrefixLength: 64 };

export interface AbuseConfig {
  /** RATE_LIMITS=off turns the request budgets off (not the login back-off or the hashing queue). */
  rateLimits: boolean;
  clients: ClientAddressing;
  budgets: Record<RateLimitClass, RateBudget>;
  /** Budgets of each API key, drawn on by its signed requests as well as its account's. */
  keyBudgets: Record<KeyRateLimitClass, RateBudget>;
  /** RSA key pairs generated per account (a budget of its own: each costs about 130 ms of CPU). */
  keyGeneration: RateBudget;
  /** Worker processes sharing one address and port (WEB_CONCURRENCY): each allows its share of a budget. */
  processes: number;
  login: { freeFailures: number; backoffBaseMs: number; backoffMaxSecs: number };
  passwordHashing: { concurrency: number; queue: number };
  requestBodyTimeoutMs: number;
  realtime: {
    maxConnectionsPerAddress: number;
    maxSubscriptions: number;
    snapshotsPerSec: number;
    /** Budgets per client address of WebSocket upgrades and of feed commands (request budgets: off with RATE_LIMITS=off). */
    upgrades: RateBudget;
    commands: RateBudget;
  };
}

const BUDGET_SETTINGS: Record<RateLimitClass, [name: string, fallback: string]> = {
  'public-reads': ['RATE_LIMIT_PUBLIC_READS', '100/1'],
  'private-reads': ['RATE_LIMIT_PRIVATE_READS', '100/1'],
  'order-writes': ['RATE_LIMIT_ORDER_WRITES', '50/1'],
  login: ['RATE_LIMIT_LOGIN', '20/60'],
  registration: ['RATE_LIMIT_REGISTRATION', '5/3600'],
};

/** The classes of the operations API keys reach. */
export const KEY_RATE_LIMIT_CLASSES = ['private-reads', 'order-writes'] as const;
export type KeyRateLimitClass = (typeof KEY_RATE_LIMIT_CLASSES)[number];

const KEY_BUDGET_SETTINGS: Record<KeyRateLimitClass, [name: string, fallback: string]> = {
  'private-reads': ['RATE_LIMIT_KEY_PRIVATE_READS', '100/1'],
  'order-writes': ['RATE_LIMIT_KEY_ORDER_WRITES', '50/1'],
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

/**
 * TRUST_PROXY: the addresses or CIDR ranges of the proxies in front of the service, comma-separated;
 * unset or `off`: none. `on` is refused: it would believe X-Forwarded-For from any peer, so that any
 * client could name itself another address and escape its budgets.
 */
function trustedProxies(env: Env): BlockList | undefined {
  const raw = env.TRUST_PROXY?.trim();
  if (!raw || raw.toLowerCase() === 'off') return undefined;
  const usage = `TRUST_PROXY must be 'off' or the addresses or CIDR ranges of your proxies, comma-separated (e.g. 10.0.0.0/8,192.0.2.7,fd00::/8)`;
  if (['on', 'true', '1', 'yes'].includes(raw.toLowerCase())) {
    throw new ConfigError(`${usage}, not '${raw}': X-Forwarded-For is believed only from the proxies named`);
  }
  const proxies = new BlockList();
  for (const entry of raw.split(',').map((item) => item.trim())) {
    const match = /^([^/]+)(?:\/(\d{1,3}))?$/.exec(entry);
    const family = match ? isIP(match[1]!) : 0;
    const type = family === 6 ? 'ipv6' : 'ipv4';
    const prefix = match?.[2] === undefined ? undefined : Number(match[2]);
    if (family === 0 || (prefix !== undefined && prefix > (family === 6 ? 128 : 32))) throw new ConfigError(`${usage}, got '${entry}'`);
    if (prefix === undefined) proxies.addAddress(match![1]!, type);
    else proxies.addSubnet(match![1]!, prefix, type);
  }
  return proxies;
}

function onOff(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['on', 'true', '1', 'yes'].includes(raw)) return true;
  if (['off', 'false', '0', 'no'].includes(raw)) return false;
  throw new ConfigError(`${name} must be on or off, got '${env[name]}'`);
}

/**
 * Sign-ins and registrations waiting for a hashing slot, per core (counting at least two): room for a burst
 * of two dozen registrations from one address on a small machine, served in turn (a hash takes about 0.1 s
 * of a core).
 */
const HASH_QUEUE_PER_CORE = 12;

export function loadAbuseConfig(env: Env, processes = 1): AbuseConfig {
  const budgets = Object.fromEntries(RATE_LIMIT_CLASSES.map((c) => [c, budget(env, ...BUDGET_SETTINGS[c])])) as Record<RateLimitClass, RateBudget>;
  const keyBudgets = Object.fromEntries(KEY_RATE_LIMIT_CLASSES.map((c) => [c, budget(env, ...KEY_BUDGET_SETTINGS[c])])) as Record<KeyRateLimitClass, RateBudget>;
  return {
    rateLimits: onOff(env, 'RATE_LIMITS', true),
    clients: { trustedProxies: trustedProxies(env), ipv6PrefixLength: integer(env, 'CLIENT_IPV6_PREFIX_LENGTH', DIRECT_CLIENTS.ipv6PrefixLength, 16, 128) },
    budgets,
    keyBudgets,
    keyGeneration: budget(env, 'RATE_LIMIT_KEY_GENERATION', '5/60'),
    processes,
    login: {
      freeFailures: integer(env, 'LOGIN_FREE_FAILURES', 5, 1, 1000),
      backoffBaseMs: integer(env, 'LOGIN_BACKOFF_BASE_MS', 1000, 1, 3_600_000),
      backoffMaxSecs: integer(env, 'LOGIN_BACKOFF_MAX_SECS', 900, 1, 86_400),
    },
    passwordHashing: {
      concurrency: integer(env, 'PASSWORD_HASH_CONCURRENCY', Math.max(1, Math.floor(availableParallelism() / 2)), 1, 64),
      queue: integer(env, 'PASSWORD_HASH_QUEUE', HASH_QUEUE_PER_CORE * Math.max(2, availableParallelism()), 0, 100_000),
    },
    requestBodyTimeoutMs: integer(env, 'REQUEST_BODY_TIMEOUT_MS', 30_000, 100, 600_000),
    realtime: {
      maxConnectionsPerAddress: integer(env, 'WS_MAX_CONNECTIONS_PER_ADDRESS', 50, 1, 1_000_000),
      maxSubscriptions: integer(env, 'WS_MAX_SUBSCRIPTIONS', 100, 1, 10_000),
      snapshotsPerSec: integer(env, 'WS_SNAPSHOTS_PER_SEC', 200, 1, 1_000_000),
      upgrades: budget(env, 'RATE_LIMIT_WS_UPGRADES', '10/1'),
      commands: budget(env, 'RATE_LIMIT_WS_COMMANDS', '50/1'),
    },
  };
}
