import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs. Credentials never reach them: these paths are censored wherever they appear. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.token', 'password', 'token'],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
