import { execFileSync } from 'node:child_process';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { accessLogger, createLogger, TurnBatch } from './logger.js';

function capture(): { sink: Writable; lines: string[] } {
  const lines: string[] = [];
  return { lines, sink: new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) }) };
}

describe('createLogger', () => {
  it('never writes a password, a token or an authorization header', () => {
    const { sink, lines } = capture();
    const logger = createLogger('info', sink);
    logger.info({ password: 'hunter2', token: 'dots_secret', body: { password: 'p2', token: 't2' }, req: { headers: { authorization: 'Bearer dots_secret' } } }, 'x');
    const out = lines.join('');
    expect(out).toContain('[redacted]');
    for (const secret of ['hunter2', 'dots_secret', 'p2', 't2']) expect(out).not.toContain(secret);
    expect(pino.levels.values.info).toBe(30);
  });
});

describe('accessLogger', () => {
  it('writes the line the logger itself would, and still censors the named paths', () => {
    const { sink, lines } = capture();
    const logger = createLogger('info', sink);
    const fields = { requestId: 'r-1', method: 'GET', path: '/api/markets', status: 200, ms: 0.42 };
    logger.info(fields, 'request');
    accessLogger(logger).info(fields, 'request');
    accessLogger(logger).info({ password: 'hunter2', token: 'dots_secret', req: { headers: { authorization: 'Bearer dots_secret' } } }, 'x');
    const [own, access, censored] = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    delete own!.time;
    delete access!.time;
    expect(access).toEqual(own);
    for (const secret of ['hunter2', 'dots_secret']) expect(lines[2]).not.toContain(secret);
    expect(censored).toMatchObject({ password: '[redacted]', token: '[redacted]' });
  });
});

describe('TurnBatch', () => {
  function fakeFile() {
    const writes: string[] = [];
    let synced = 0;
    return { writes, synced: () => synced, file: { write: (data: string) => writes.push(data), flush: () => undefined, flushSync: () => (synced += 1) } };
  }

  it('writes the lines of one event-loop turn together, when the turn ends', async () => {
    const { file, writes } = fakeFile();
    const batch = new TurnBatch(file as never);
    batch.write('a\n');
    batch.write('b\n');
    batch.write('c\n');
    expect(writes).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual(['a\nb\nc\n']);
    batch.write('d\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual(['a\nb\nc\n', 'd\n']);
  });

  it('hands over and flushes the pending lines synchronously on demand', () => {
    const { file, writes, synced } = fakeFile();
    const batch = new TurnBatch(file as never);
    batch.flushSync();
    expect(synced()).toBe(0);
    batch.write('a\n');
    batch.flushSync();
    expect(writes).toEqual(['a\n']);
    expect(synced()).toBe(1);
  });

  it('flushes what the last turn logged when the process exits', () => {
    const logger = fileURLToPath(new URL('./logger.ts', import.meta.url));
    const script = `import { createLogger } from ${JSON.stringify(logger)};
      const log = createLogger('info');
      log.info({ n: 1 }, 'first'); log.info({ n: 2 }, 'last'); process.exit(0);`;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(out.trim().split('\n').map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual(['first', 'last']);
  });
});
