import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createLogger } from './logger.js';

describe('createLogger', () => {
  it('never writes a password, a token or an authorization header', () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
    const logger = createLogger('info', sink);
    logger.info({ password: 'hunter2', token: 'dots_secret', body: { password: 'p2', token: 't2' }, req: { headers: { authorization: 'Bearer dots_secret' } } }, 'x');
    const out = lines.join('');
    expect(out).toContain('[redacted]');
    for (const secret of ['hunter2', 'dots_secret', 'p2', 't2']) expect(out).not.toContain(secret);
    expect(pino.levels.values.info).toBe(30);
  });
});
