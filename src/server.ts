import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { createApp } from './app.js';
import { processShare } from './admission/rate-limit.js';
import { answerClientErrors } from './http/client-errors.js';
import type { Config } from './config.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded.js';
import { checkConnection, type Db } from './db/knex.js';
import { migrateLatest } from './db/migrate.js';
import { createPools, destroyPools, type Pools } from './db/pools.js';
import type { Logger } from './logger.js';
import { AccountService } from './domain/accounts/service.js';
import { seedDemo } from './domain/demo/seed.js';
import { startExpirySweep } from './domain/trading/sweep.js';
import type { FeedOptions } from './domain/feed/service.js';
import type { RealtimeOptions } from './realtime/options.js';
import { attachRealtime, type RealtimeServer } from './realtime/ws-server.js';
import { createServices, type Services } from './services.js';
import { ServiceMetrics, serveMetrics } from './observability/metrics.js';
import { apiKeyEncryptionKey, NO_ENCRYPTION_KEY, secretsOf } from './api-key-secrets.js';
import { Phases } from './process/phases.js';

export const DOCUMENT_PATH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../openapi/dist/openapi.json');
/** The real-time feed's AsyncAPI document (source), served as JSON at /asyncapi.json. */
export const ASYNCAPI_PATH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../openapi/asyncapi.yaml');

const EXPIRY_SWEEP_INTERVAL_MS = 1000;
/** How often the events and candles of markets changed by this process are refreshed (off the request path). */
const ROLLUP_REFRESH_INTERVAL_MS = 250;
/**
 * Request line and headers may take up to 64 KiB (Node's default is 16 KiB): a batch scoring GET names up
 * to 1,000 order ids in its query string (about 47 KiB of UUIDs as repeated parameters).
 */
const MAX_HEADER_BYTES = 64 * 1024;
/** How long a stop waits for in-flight requests. */
const DRAIN_TIMEOUT_MS = 7_000;

export interface RunningService {
  server: Server;
  url: string;
  db: Db;
  pools: Pools;
  services: Services;
  /** The WebSocket endpoint of the real-time feed (GET /ws). */
  realtime: RealtimeServer;
  /** The process's figures, when METRICS_PORT or METRICS_TOKEN is set. */
  metrics: ServiceMetrics | undefined;
  /** Where METRICS_PORT's listener serves them. */
  metricsUrl: string | undefined;
  /**
   * Resolves once the search index has been read whole (until then every search waits for it: seconds on a
   * catalogue of 100,000 events, and readiness answers 503 `starting`); readiness then answers 200 unless a
   * stop began first. Never resolves if the index is never read (the database refusing every attempt).
   */
  ready: Promise<void>;
  /**
   * Resolves if the embedded database stopped and could not be started again (`/livez` answers 503 from
   * then on): the process must stop and exit non-zero. Never resolves with `DATABASE_URL`.
   */
  databaseLost: Promise<Error>;
  /**
   * Drains, stops accepting, closes the feed's connections, finishes in-flight requests, stops the background
   * loops and the listeners, closes the pools, stops the embedded database.
   */
  stop(): Promise<void>;
}

/** Settings tests and benchmarks may change (defaults: what `npm start` uses). */
export interface ServiceOptions {
  realtime?: Partial<RealtimeOptions>;
  feed?: FeedOptions;
  /** Another process (the primary of the workers) already ran prepareDatabase. */
  databasePrepared?: boolean;
  /** A worker of WEB_CONCURRENCY > 1: the primary serves METRICS_PORT, with this process's figures among its workers'. */
  metricsByPrimary?: boolean;
}

/** Metrics are collected only when something can read them: METRICS_PORT or METRICS_TOKEN. */
const metricsWanted = (config: Config) => config.observability.metricsPort !== undefined || config.observability.metricsToken !== undefined;

/**
 * The database the service uses: `DATABASE_URL`, or the embedded PostgreSQL of `DATA_DIR`, started here and
 * started again if it stops on its own; `onLost` is told when that fails (the process must then exit).
 */
export async function startDatabase(config: Config, logger: Logger, onLost: (error: Error) => void = () => undefined): Promise<{ databaseUrl: string; embedded?: EmbeddedDatabase }> {
  if (config.databaseUrl) {
    await checkConnection(config.databaseUrl);
    return { databaseUrl: config.databaseUrl };
  }
  logger.info({ dataDir: config.dataDir }, 'starting embedded PostgreSQL');
  const embedded = await startEmbeddedPostgres({
    dataDir: config.dataDir,
    stageDir: config.embeddedPgDir,
    onLog: (line) => logger.debug({ postgres: line }),
    onNotice: (message) => logger.warn(message),
    onRestarted: () => logger.warn('the embedded PostgreSQL is running again'),
    onLost: (error) => {
      logger.fatal({ err: error }, 'the embedded PostgreSQL is gone: stopping (exit code 1)');
      onLost(error);
    },
  });
  if (!embedded.clusterDir.startsWith(path.resolve(config.dataDir))) logger.info({ clusterDir: embedded.clusterDir }, 'embedded PostgreSQL cluster kept outside DATA_DIR');
  return { databaseUrl: embedded.url, embedded };
}

/**
 * Once per start of the service, whatever the number of its processes: migrations, the demo data and the
 * operator account. Every step is safe when several instances run it at once on one database.
 */
export async function prepareDatabase(db: Db, config: Config, logger: Logger): Promise<void> {
  const applied = await migrateLatest(db);
  if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');
  const accounts = new AccountService(db, { startingBalance: config.startingBalance, tokenTtlSecs: config.tokenTtlSecs });
  if (config.seed === 'demo' && (await seedDemo(db, accounts))) logger.info('demo catalogue and accounts seeded');
  if (config.admin) await accounts.ensureAdmin(config.admin.email, config.admin.password);
}

/** Pools: the database pools, and the figures that watch them when metrics are wanted. */
function openPools(databaseUrl: string, config: Config, options: ServiceOptions, phases: Phases): { pools: Pools; metrics: ServiceMetrics | undefined } {
  const pools = createPools(databaseUrl);
  phases.started(() => destroyPools(pools));
  const metrics = metricsWanted(config) ? new ServiceMetrics() : undefined;
  metrics?.watchPools(pools);
  if (options.metricsByPrimary) metrics?.reportToPrimary();
  return { pools, metrics };
}

/** Services: the database prepared (unless another process did), the documents read, one set of domain services. */
async function buildServices(pools: Pools, config: Config, logger: Logger, options: ServiceOptions, metrics: ServiceMetrics | undefined, embedded: boolean): Promise<Services> {
  if (!options.databasePrepared) await prepareDatabase(pools.db, config, logger);
  const document = JSON.parse(await readFile(DOCUMENT_PATH, 'utf8')) as object;
  const asyncapi = parseYaml(await readFile(ASYNCAPI_PATH, 'utf8')) as object;
  const apiKeySecrets = secretsOf(await apiKeyEncryptionKey(config, embedded));
  if (apiKeySecrets === NO_ENCRYPTION_KEY) logger.warn(NO_ENCRYPTION_KEY);
  return createServices(pools, config, document, {
    apiKeySecrets,
    asyncapi,
    feed: options.feed,
    onBackgroundError: (error, context) => logger.error({ err: error }, `${context} failed`),
    tradingActivity: metrics,
  });
}

/** Listeners: the dedicated connections that LISTEN for session changes and for the feed's records. */
async function startListeners(services: Services, databaseUrl: string, phases: Phases): Promise<void> {
  await services.accounts.start(databaseUrl);
  phases.started(() => services.accounts.stop());
  // The feed listens before the first client can connect, so that no record committed after it is missed.
  await services.feed.start(databaseUrl);
  phases.started(() => services.feed.stop());
}

/**
 * Background loops. The market rollups' refresh starts first so that it stops last: its stop refreshes the
 * last changes' events and candles and sends the last feed notifications once nothing else trades any more.
 */
function startBackgroundLoops(services: Services, config: Config, logger: Logger, phases: Phases): void {
  // Event figures and candles of the markets this process changed (domain/trading/rollups.ts).
  const rollupRefresh = startExpirySweep({ expireOrders: () => services.trading.flushRollups() }, ROLLUP_REFRESH_INTERVAL_MS, (error) =>
    logger.error({ err: error }, 'market rollup refresh failed'),
  );
  phases.started(async () => {
    await rollupRefresh.stop();
    await services.trading.flushRollups().catch((error: unknown) => logger.error({ err: error }, 'market rollup refresh failed'));
    await services.trading.flushFeedNotifications();
  });
  // Expired signature digests of API keys are deleted every window.
  services.apiKeys.start();
  phases.started(() => services.apiKeys.stop());
  // The search index: kept current between searches too, and old changes pruned.
  services.searchIndex.start();
  phases.started(() => services.searchIndex.stop());
  // Orders past their expiration_ts are cancelled within about a second (placements in their market
  // also cancel them on the spot).
  const expirySweep = startExpirySweep(services.trading, EXPIRY_SWEEP_INTERVAL_MS, (error) => logger.error({ err: error }, 'order expiry sweep failed'));
  phases.started(() => expirySweep.stop());
  // Order sessions past their expiry: their accounts' resting orders are cancelled (0 disables the sweep).
  if (config.heartbeatSweepIntervalSecs > 0) {
    const expireSessions = async () => {
      const expired = await services.sessions.expireSessions();
      if (expired > 0) logger.info({ sessions: expired }, 'order sessions expired');
      return expired;
    };
    const heartbeatSweep = startExpirySweep({ expireOrders: expireSessions }, config.heartbeatSweepIntervalSecs * 1000, (error) =>
      logger.error({ err: error }, 'order session expiry sweep failed'),
    );
    phases.started(() => heartbeatSweep.stop());
  }
}

/** METRICS_PORT: a listener of its own (in a worker, the primary's serves every worker's figures). */
async function serveMetricsPort(config: Config, logger: Logger, options: ServiceOptions, metrics: ServiceMetrics | undefined, phases: Phases): Promise<string | undefined> {
  const metricsPort = config.observability.metricsPort;
  if (!metrics || metricsPort === undefined || options.metricsByPrimary) return undefined;
  const listener = await serveMetrics(config.host, metricsPort, () => metrics.registry.metrics(), (error) => logger.error({ err: error }, 'metrics collection failed'));
  logger.info({ url: listener.url }, 'metrics listening');
  phases.started(() => {
    listener.server.close();
    listener.server.closeAllConnections();
  });
  return listener.url;
}

/** HTTP: the API and, on the same server, the real-time feed's WebSocket endpoint (GET /ws). */
async function serveHttp(
  services: Services,
  config: Config,
  logger: Logger,
  options: ServiceOptions,
  metrics: ServiceMetrics | undefined,
  phases: Phases,
): Promise<{ server: Server; url: string; realtime: RealtimeServer }> {
  const app = await createApp({ services, logger, abuse: config.abuse, observability: config.observability, metrics });
  const handle = app.callback();
  const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => void handle(req, res)).listen(config.port, config.host);
  answerClientErrors(server);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  const { maxConnectionsPerAddress, snapshotsPerSec } = config.abuse.realtime;
  const realtime = attachRealtime(server, services.feed, logger, {
    maxConnectionsPerAddress,
    snapshotsPerSec,
    clients: config.abuse.clients,
    ...(config.abuse.rateLimits && {
      upgradeBudget: processShare(config.abuse.realtime.upgrades, config.abuse.processes),
      commandBudget: processShare(config.abuse.realtime.commands, config.abuse.processes),
    }),
    apiKeys: services.apiKeys,
    ...options.realtime,
    ...(metrics && { onMessageSent: () => metrics.wsMessages.inc(), onSlowConsumer: () => metrics.wsSlowConsumers.inc() }),
  });
  metrics?.watchRealtime({ connections: () => realtime.connections, subscriptions: () => services.feed.hub.size });
  phases.started(async () => {
    // WebSocket connections first (they would keep server.close waiting).
    await realtime.close();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      // Requests still running then are cut, so that the whole stop stays within a process manager's grace period.
      setTimeout(() => server.closeAllConnections(), DRAIN_TIMEOUT_MS).unref();
    });
  });
  return { server, url, realtime };
}

/**
 * Everything `npm start` does, as a function: tests and benchmarks start the same service. It starts in
 * phases (database, pools, services, listeners, background loops, METRICS_PORT, HTTP) and stops them in the
 * reverse order, after a drain; a start that fails stops what it had started.
 */
export async function startService(config: Config, logger: Logger, options: ServiceOptions = {}): Promise<RunningService> {
  const phases = new Phases();
  let lost!: (error: Error) => void;
  const databaseLost = new Promise<Error>((resolve) => (lost = resolve));
  try {
    const { databaseUrl, embedded } = await startDatabase(config, logger, lost);
    phases.started(() => embedded?.stop());
    const { pools, metrics } = openPools(databaseUrl, config, options, phases);
    const services = await buildServices(pools, config, logger, options, metrics, embedded !== undefined);
    void databaseLost.then(() => services.system.markDatabaseLost());
    await startListeners(services, databaseUrl, phases);
    startBackgroundLoops(services, config, logger, phases);
    const metricsUrl = await serveMetricsPort(config, logger, options, metrics, phases);
    const http = await serveHttp(services, config, logger, options, metrics, phases);
    let stopping: Promise<void> | undefined;
    const stop = () => (stopping ??= drain(services, config).then(() => phases.stop()));
    const ready = services.searchIndex.loaded.then(() => services.system.markReady());
    return { ...http, db: pools.db, pools, services, metrics, metricsUrl, ready, databaseLost, stop };
  } catch (error) {
    await phases.stop();
    throw error;
  }
}

/**
 * /readyz answers 503 from now on; for SHUTDOWN_DELAY_SECS requests are still taken, so that a load balancer
 * polling it stops sending them before the listener closes.
 */
async function drain(services: Services, config: Config): Promise<void> {
  services.system.markDraining();
  const delayMs = config.observability.shutdownDelaySecs * 1000;
  if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
}
