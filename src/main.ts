import cluster from 'node:cluster';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createDb } from './db/knex.js';
import { createLogger, type Logger } from './logger.js';
import { stopOnSignals } from './process/signals.js';
import { startWorkers, type ListeningMessage } from './process/workers.js';
import { clusterMetrics, serveMetrics } from './observability/metrics.js';
import { prepareDatabase, startDatabase, startService, type RunningService } from './server.js';
import { apiKeyEncryptionKey } from './api-key-secrets.js';
import { Phases } from './process/phases.js';

/**
 * `npm start` (node dist/main.js): the service until SIGTERM or SIGINT. With WEB_CONCURRENCY=1 one process
 * does everything; with more, this process (the primary) starts the database and prepares it once, then
 * runs that many HTTP workers on one port and stops them, then the database, on a signal.
 */

/** Connections of the primary while it prepares the database (the demo seed keeps one for its lock). */
const PREPARATION_POOL_SIZE = 4;

function listeningLine(logger: Logger, url: string, extra: object = {}): void {
  logger.info({ url, docs: `${url}/docs`, ...extra }, 'Dots Exchange is listening');
}

/** Logged once readiness turns 200 (see RunningService.ready); not when a stop began first. */
function readyLine(logger: Logger, service: RunningService): void {
  void service.ready.then(() => {
    if (service.services.system.phase === 'ready') logger.info('ready: the search index is loaded');
  });
}

async function runAlone(config: Config, logger: Logger): Promise<void> {
  const service = await startService(config, logger);
  listeningLine(logger, service.url);
  readyLine(logger, service);
  stopOnSignals(logger, () => service.stop());
  // A process manager restarts the whole service, which starts its database afresh.
  void service.databaseLost.then(() => service.stop().finally(() => process.exit(1)));
}

async function runWorker(config: Config, logger: Logger): Promise<void> {
  const service = await startService(config, logger, { databasePrepared: true, metricsByPrimary: true });
  logger.info({ url: service.url }, 'worker listening');
  process.send?.({ kind: 'listening', url: service.url } satisfies ListeningMessage);
  readyLine(logger, service);
  stopOnSignals(logger, () => service.stop());
}

/** Preparation: migrations, seed and operator once for every worker, and the API key encryption key they are given. */
async function prepareForWorkers(config: Config, logger: Logger, databaseUrl: string, embedded: boolean): Promise<Buffer | undefined> {
  const db = createDb(databaseUrl, PREPARATION_POOL_SIZE);
  await prepareDatabase(db, config, logger).finally(() => db.destroy());
  // The workers are given DATABASE_URL: they get the embedded database's key file's key the same way.
  return apiKeyEncryptionKey(config, embedded);
}

/** METRICS_PORT: every worker's figures, collected by this process over the cluster's IPC channel. */
async function serveClusterMetrics(config: Config, logger: Logger, phases: Phases): Promise<void> {
  const metricsPort = config.observability.metricsPort;
  if (metricsPort === undefined) return;
  const listener = await serveMetrics(config.host, metricsPort, clusterMetrics(), (error) => logger.error({ err: error }, 'metrics collection failed'));
  logger.info({ url: listener.url }, 'metrics listening');
  phases.started(() => listener.server.close());
}

/** The primary of WEB_CONCURRENCY workers: database, preparation, METRICS_PORT, workers; stopped in the reverse order. */
async function runPrimary(config: Config, logger: Logger): Promise<void> {
  const phases = new Phases();
  const stopAll = () => phases.stop();
  try {
    const { databaseUrl, embedded } = await startDatabase(config, logger, () => void stopAll().finally(() => process.exit(1)));
    phases.started(() => embedded?.stop());
    const encryptionKey = await prepareForWorkers(config, logger, databaseUrl, embedded !== undefined);
    await serveClusterMetrics(config, logger, phases);
    const workers = startWorkers({
      count: config.webConcurrency,
      env: { DATABASE_URL: databaseUrl, ...(encryptionKey && { API_KEY_ENCRYPTION_KEY: encryptionKey.toString('hex') }) },
      logger,
      onGiveUp: (reason) => {
        logger.fatal({ reason }, 'workers keep exiting: stopping');
        void stopAll().finally(() => process.exit(1));
      },
    });
    phases.started(() => workers.stop());
    // Signals that come while the workers start stop them too.
    stopOnSignals(logger, stopAll);
    listeningLine(logger, await workers.listening, { workers: config.webConcurrency });
  } catch (error) {
    await stopAll();
    throw error;
  }
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`dots-exchange: configuration refused: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
  const logger = createLogger(config.logLevel);
  if (cluster.isWorker) await runWorker(config, logger.child({ worker: cluster.worker?.id }));
  else if (config.webConcurrency > 1) await runPrimary(config, logger);
  else await runAlone(config, logger);
}

main().catch((error: unknown) => {
  console.error(`dots-exchange: could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
