import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/**
 * Where logs go by default: stdout, written asynchronously (lines logged while a write is in flight go
 * out together in the next one, so a busy server makes one write per batch, not one per request). pino
 * flushes it synchronously when the process exits.
 */
export function logDestination(dest: number | string = 1): DestinationStream {
  return pino.destination({ dest, sync: false });
}

/** Structured JSON logs. Credentials never reach them: these paths are censored wherever they appear. */
export function createLogger(level: string, destination: DestinationStream = logDestination()): Logger {
  const options = {
    level,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.token', 'password', 'token'],
      censor: '[redacted]',
    },
  };
  return pino(options, destination);
}
