import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/** pino's own exit hook (on-exit-leak-free): runs registered flushes on exit without keeping the objects alive. */
const onExit = createRequire(import.meta.url)('on-exit-leak-free') as {
  register<T extends object>(object: T, flush: (object: T) => void): void;
};

type SonicBoom = ReturnType<typeof pino.destination>;

/**
 * The lines logged during one turn of the event loop, handed to the file as one string when the turn ends
 * (setImmediate): a busy server makes one write per turn (of 30 requests and more under load) instead of
 * one per request. Each asynchronous write costs the event loop a thread-pool round trip, several µs on a
 * VM, more than pino takes to format a line; sonic-boom's own batching (minLength) re-measures its whole
 * buffer on every line, which costs as much.
 */
export class TurnBatch implements DestinationStream {
  private pending = '';

  constructor(private readonly file: SonicBoom) {
    // on exit (after pino's flush of the file): what this turn logged
    onExit.register(this, (batch) => batch.flushSync());
  }

  write(line: string): void {
    if (this.pending === '') setImmediate(this.handOver);
    this.pending += line;
  }

  /** pino's logger.flush(). */
  flush(callback?: (error?: Error) => void): void {
    this.handOver();
    this.file.flush(callback);
  }

  flushSync(): void {
    if (this.pending === '') return;
    this.handOver();
    this.file.flushSync();
  }

  private readonly handOver = (): void => {
    if (this.pending === '') return;
    const lines = this.pending;
    this.pending = '';
    this.file.write(lines);
  };
}

/**
 * Where logs go by default: stdout, one write per event-loop turn (TurnBatch), asynchronously (lines
 * logged while a write is in flight go out together in the next one). Flushed synchronously when the
 * process exits.
 */
export function logDestination(dest: number | string = 1): DestinationStream {
  return new TurnBatch(pino.destination({ dest, sync: false }));
}

const CENSOR = '[redacted]';
const NAMED_PATHS = ['req.headers.authorization', 'req.headers.cookie', 'password', 'token'];

/** Structured JSON logs. Credentials never reach them: these paths are censored wherever they appear. */
export function createLogger(level: string, destination: DestinationStream = logDestination()): Logger {
  return pino({ level, redact: { paths: [...NAMED_PATHS, '*.password', '*.token'], censor: CENSOR } }, destination);
}

/**
 * The logger of the one-line-per-request access log, whose fields are fixed primitives (id, method, path,
 * status, duration: never a header or a body). pino runs a wildcard redaction path on every field of every
 * line, about 1.5 µs a request for nothing here; this child keeps only the named paths.
 */
export function accessLogger(logger: Logger): Logger {
  return logger.child({}, { redact: { paths: NAMED_PATHS, censor: CENSOR } });
}
