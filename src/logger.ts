import { pino, type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs. Credentials never reach them: these paths are censored wherever they appear. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        '*.password',
        '*.token',
        'password',
        'token',
      ],
      censor: '[redacted]',
    },
  });
}
