import type { Logger } from '../logger.js';

/**
 * Runs `stop` on the first SIGTERM or SIGINT, then exits (0, or 1 when stopping failed). Later signals are
 * ignored rather than killing the process half-way: a Ctrl-C reaches the service twice (from the terminal
 * and forwarded by npm), and the stop has deadlines of its own.
 */
export function stopOnSignals(logger: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
