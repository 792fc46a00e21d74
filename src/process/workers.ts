import cluster, { type Worker } from 'node:cluster';
import type { Logger } from '../logger.js';

/** What a worker tells the primary once its HTTP server listens. */
export interface ListeningMessage {
  kind: 'listening';
  url: string;
}

export interface WorkerPool {
  /** The URL the workers serve, once every first worker listens; rejects when one of them fails to start. */
  listening: Promise<string>;
  /** SIGTERM to every worker (each drains its requests), SIGKILL to those still running after the deadline. */
  stop(): Promise<void>;
}

/** How long a worker may take to stop before it is killed. */
const WORKER_STOP_DEADLINE_MS = 8_000;
/** More unexpected worker exits than this within RESTART_WINDOW_MS: something is wrong beyond one crash. */
const MAX_RESTARTS = 10;
const RESTART_WINDOW_MS = 60_000;

function isListening(message: unknown): message is ListeningMessage {
  return typeof message === 'object' && message !== null && (message as { kind?: unknown }).kind === 'listening';
}

/**
 * Runs `count` HTTP worker processes of this program (node:cluster: one port, connections spread across
 * them). A worker that dies unexpectedly is replaced; if workers keep dying, `onGiveUp` is called.
 */
export function startWorkers(options: { count: number; env: Record<string, string>; logger: Logger; onGiveUp: (reason: string) => void }): WorkerPool {
  const { count, env, logger, onGiveUp } = options;
  let stopping = false;
  const restarts: number[] = [];
  let resolveListening!: (url: string) => void;
  let rejectListening!: (error: Error) => void;
  const listening = new Promise<string>((resolve, reject) => {
    resolveListening = resolve;
    rejectListening = reject;
  });
  const ready = new Set<number>();
  let started = false;

  const fork = (): Worker => {
    const worker = cluster.fork(env);
    worker.on('message', (message: unknown) => {
      if (!isListening(message)) return;
      ready.add(worker.id);
      if (!started && ready.size === count) {
        started = true;
        resolveListening(message.url);
      }
    });
    worker.once('exit', (code, signal) => {
      ready.delete(worker.id);
      if (stopping) return;
      if (!started) {
        rejectListening(new Error(`a worker exited while starting (code ${code}${signal ? `, ${signal}` : ''})`));
        return;
      }
      const now = Date.now();
      restarts.push(now);
      while (restarts.length > 0 && restarts[0]! < now - RESTART_WINDOW_MS) restarts.shift();
      if (restarts.length > MAX_RESTARTS) {
        onGiveUp(`${restarts.length} workers exited within ${RESTART_WINDOW_MS / 1000} s`);
        return;
      }
      logger.error({ worker: worker.process.pid, code, signal }, 'worker exited unexpectedly: starting another');
      fork();
    });
    return worker;
  };
  for (let i = 0; i < count; i += 1) fork();

  return {
    listening,
    stop: async () => {
      stopping = true;
      const running = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined && !worker.isDead());
      await Promise.all(
        running.map(
          (worker) =>
            new Promise<void>((resolve) => {
              const deadline = setTimeout(() => worker.process.kill('SIGKILL'), WORKER_STOP_DEADLINE_MS);
              worker.once('exit', () => {
                clearTimeout(deadline);
                resolve();
              });
              worker.process.kill('SIGTERM');
            }),
        ),
      );
    },
  };
}
