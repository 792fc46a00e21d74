import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { createApp } from './app.js';
import { answerClientErrors } from './http/client-errors.js';
import { processShare } from './http/rate-limit.js';
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
import { attachRealtime, type RealtimeOptions, type RealtimeServer } from './realtime/ws-server.js';
import { createServices, type Services } from './services.js';
import { ServiceMetrics, serveMetrics } from './observability/metrics.js';
import { apiKeyEncryptionKey, NO_ENCRYPTION_KEY, secretsOf } from './api-key-secrets.js';

export const DOCUMENT_PATH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../openapi/dist/openapi.json');
/** The real-time feed's AsyncAPI document (source), served as JSON at /asyncapi.json. */
export const ASYNCAPI_PATH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../openapi/asyncapi.yaml');

const EXPIRY_SWEEP_INTERVAL_MS = 1000;
/** How often the event rollups of markets changed by this process are recomputed (off the request path). */
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
  /** Stops accepting, closes the feed's connections, finishes in-flight requests, closes the pool, stops the embedded database. */
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
export const metricsWanted = (config: Config) => config.observability.metricsPort !== undefined || config.observability.metricsToken !== undefined;

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

/** Everything `npm start` does, as a function: tests and benchmarks start the same service. */
export async function startService(config: Config, logger: Logger, options: ServiceOptions = {}): Promise<RunningService> {
  let lost!: (error: Error) => void;
  const databaseLost = new Promise<Error>((resolve) => (lost = resolve));
  const { databaseUrl, embedded } = await startDatabase(config, logger, lost);
  const pools = createPools(databaseUrl);
  const { db } = pools;
  const metrics = metricsWanted(config) ? new ServiceMetrics() : undefined;
  metrics?.watchPools(pools);
  if (options.metricsByPrimary) metrics?.reportToPrimary();
  let feedStarted: Services['feed'] | undefined;
  let accountsStarted: Services['accounts'] | undefined;
  try {
    if (!options.databasePrepared) await prepareDatabase(db, config, logger);
    const document = JSON.parse(await readFile(DOCUMENT_PATH, 'utf8')) as object;
    const asyncapi = parseYaml(await readFile(ASYNCAPI_PATH, 'utf8')) as object;
    const apiKeySecrets = secretsOf(await apiKeyEncryptionKey(config, embedded !== undefined));
    if (apiKeySecrets === NO_ENCRYPTION_KEY) logger.warn(NO_ENCRYPTION_KEY);
    const services = createServices(pools, config, document, {
      apiKeySecrets,
      asyncapi,
      feed: options.feed,
      onBackgroundError: (error, context) => logger.error({ err: error }, `${context} failed`),
      tradingActivity: metrics,
    });
    void databaseLost.then(() => services.system.markDatabaseLost());
    await services.accounts.start(databaseUrl);
    accountsStarted = services.accounts;
    services.apiKeys.start();
    // The feed listens before the first client can connect, so that no record committed after it is missed.
    await services.feed.start(databaseUrl);
    feedStarted = services.feed;
    const app = await createApp({ services, logger, abuse: config.abuse, observability: config.observability, metrics });
    const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES }, app.callback()).listen(config.port, config.host);
    answerClientErrors(server);
    await new Promise<void>((resolve, reject) => {
      server.once('listening', resolve);
      server.once('error', reject);
    });
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
    // GET /ws: the real-time feed, on this server.
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
    // METRICS_PORT: a listener of its own (in a worker, the primary's serves every worker's figures)
    const metricsPort = config.observability.metricsPort;
    const metricsListener =
      metrics && metricsPort !== undefined && !options.metricsByPrimary ? await serveMetrics(config.host, metricsPort, () => metrics.registry.metrics(), (error) => logger.error({ err: error }, 'metrics collection failed')) : undefined;
    if (metricsListener) logger.info({ url: metricsListener.url }, 'metrics listening');
    // Orders past their expiration_ts are cancelled within about a second (placements in their market
    // also cancel them on the spot).
    const expirySweep = startExpirySweep(services.trading, EXPIRY_SWEEP_INTERVAL_MS, (error) => logger.error({ err: error }, 'order expiry sweep failed'));
    // The search index: kept current between searches too, and old changes pruned.
    services.searchIndex.start();
    // Event rollups (volume, liquidity, open interest) of the markets this process changed, coalesced per event.
    const rollupRefresh = startExpirySweep(
      { expireOrders: () => services.trading.flushRollups() },
      ROLLUP_REFRESH_INTERVAL_MS,
      (error) => logger.error({ err: error }, 'event rollup refresh failed'),
    );
    // Order sessions past their expiry: their accounts' resting orders are cancelled (0 disables the sweep).
    const heartbeatSweep =
      config.heartbeatSweepIntervalSecs > 0
        ? startExpirySweep(
            {
              expireOrders: async () => {
                const expired = await services.sessions.expireSessions();
                if (expired > 0) logger.info({ sessions: expired }, 'order sessions expired');
                return expired;
              },
            },
            config.heartbeatSweepIntervalSecs * 1000,
            (error) => logger.error({ err: error }, 'order session expiry sweep failed'),
          )
        : undefined;

    let stopping: Promise<void> | undefined;
    const stop = () => {
      stopping ??= (async () => {
        // /readyz answers 503 from now on; for SHUTDOWN_DELAY_SECS requests are still taken, so that a load
        // balancer polling it stops sending them before the listener closes.
        services.system.markDraining();
        const delayMs = config.observability.shutdownDelaySecs * 1000;
        if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
        await expirySweep.stop();
        await heartbeatSweep?.stop();
        // WebSocket connections first (they would keep server.close waiting), then the feed's listener.
        await realtime.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
          // Requests still running then are cut, so that the whole stop stays within a process manager's grace period.
          setTimeout(() => server.closeAllConnections(), DRAIN_TIMEOUT_MS).unref();
        });
        // The last changes' event rollups, once no request trades any more, before the pool closes.
        await rollupRefresh.stop();
        await services.trading.flushRollups().catch((error: unknown) => logger.error({ err: error }, 'event rollup refresh failed'));
        await services.trading.flushFeedNotifications();
        await services.feed.stop();
        await services.searchIndex.stop();
        services.apiKeys.stop();
        await services.accounts.stop();
        await destroyPools(pools);
        await embedded?.stop();
        metricsListener?.server.close();
        metricsListener?.server.closeAllConnections();
      })();
      return stopping;
    };
    const ready = services.searchIndex.loaded.then(() => services.system.markReady());
    return { server, url, db, pools, services, realtime, metrics, metricsUrl: metricsListener?.url, ready, databaseLost, stop };
  } catch (error) {
    await feedStarted?.stop();
    await accountsStarted?.stop();
    await destroyPools(pools);
    await embedded?.stop();
    throw error;
  }
}
