import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ACCESS_LOG_DELAY_MS, AccessLog, accessLine, createLogger, TurnBatch } from './logger.js';

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

describe('createLogger time', () => {
  it('stamps each line with the epoch milliseconds it is written in, as pino does', async () => {
    const { sink, lines } = capture();
    const logger = createLogger('info', sink);
    const before = Date.now();
    logger.info('a');
    await new Promise((resolve) => setTimeout(resolve, 5));
    logger.info('b');
    const after = Date.now();
    const [a, b] = lines.map((line) => (JSON.parse(line) as { time: number }).time);
    expect(a).toBeGreaterThanOrEqual(before);
    expect(b).toBeGreaterThan(a!);
    expect(b).toBeLessThanOrEqual(after);
  });
});

describe('AccessLog', () => {
  const fields = { requestId: 'r-1', traceId: '4bf92f3577b34da6a3ce929d0e0e4736', method: 'GET', path: '/api/markets', status: 200, ms: 0.42, client: '127.0.0.1', accountId: undefined };

  const flushed = () => new Promise((resolve) => setTimeout(resolve, ACCESS_LOG_DELAY_MS + 5));

  it('writes the line the logger itself would, stamped with the time it was given, with those that follow it', async () => {
    const { sink, lines } = capture();
    const logger = createLogger('info', sink);
    const access = new AccessLog(logger);
    const before = Date.now();
    access.write(fields);
    const given = Date.now();
    // a later millisecond for the logger's own line
    while (Date.now() <= given);
    logger.info(fields, 'request');
    access.write({ ...fields, requestId: 'r-2' });
    expect(lines).toHaveLength(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toHaveLength(1);
    await flushed();
    expect(lines).toHaveLength(3);
    const [own, deferred, next] = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(deferred!.time).toBeGreaterThanOrEqual(before);
    expect(deferred!.time).toBeLessThanOrEqual(given);
    expect(own!.time).toBeGreaterThan(given);
    expect({ ...deferred, time: 0 }).toEqual({ ...own, time: 0 });
    expect(next).toMatchObject({ requestId: 'r-2', msg: 'request' });
  });

  it('writes exactly the line pino writes, for any text in its fields', () => {
    const { sink, lines } = capture();
    const logger = createLogger('info', sink).child({ worker: 2 });
    const access = new AccessLog(logger);
    const texts = ['/api/events', 'say "hi"', 'back\\slash', 'a"b\\c', 'tab\there\nnew line', '\u0000\u001f\u007f', 'é€𝄞 ünïcode', '\ud800 lone', ''];
    for (const text of texts) {
      const record = { requestId: text, traceId: text, method: 'GET', path: text, status: 404, ms: 12.34, client: text, accountId: text, apiKeyId: text };
      logger.info(record, 'request');
      const own = lines.pop()!.replace(/"time":\d+/, '"time":1');
      expect(accessLine(30, 1, (logger as unknown as Record<symbol, string>)[pino.symbols.chindingsSym]!, record)).toBe(own);
    }
    const bare = { ...fields, client: undefined, apiKeyId: undefined };
    logger.info(bare, 'request');
    expect(accessLine(30, 1, ',"pid":' + process.pid + ',"hostname":' + JSON.stringify(os.hostname()) + ',"worker":2', bare)).toBe(lines.pop()!.replace(/"time":\d+/, '"time":1'));
    expect(access.enabled).toBe(true);
  });

  it('writes only its own fields: nothing else a record carries reaches the line', async () => {
    const { sink, lines } = capture();
    const access = new AccessLog(createLogger('info', sink));
    access.write({ ...fields, password: 'hunter2', token: 'dots_secret', req: { headers: { authorization: 'Bearer dots_secret' } } } as never);
    await flushed();
    for (const secret of ['hunter2', 'dots_secret', 'password', 'authorization']) expect(lines[0]).not.toContain(secret);
    expect(Object.keys(JSON.parse(lines[0]!) as object)).toEqual(['level', 'time', 'pid', 'hostname', ...Object.keys(fields).filter((key) => key !== 'accountId'), 'msg']);
  });

  it('is off below the info level', () => {
    expect(new AccessLog(createLogger('warn', capture().sink)).enabled).toBe(false);
    expect(new AccessLog(createLogger('info', capture().sink)).enabled).toBe(true);
  });

  it('writes the pending lines when the process exits', () => {
    const logger = fileURLToPath(new URL('./logger.ts', import.meta.url));
    const script = `import { AccessLog, createLogger } from ${JSON.stringify(logger)};
      const log = createLogger('info'); const access = new AccessLog(log);
      log.info('first'); access.write({ requestId: 'r-1', method: 'GET', path: '/', status: 200, ms: 1 }); process.exit(0);`;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(out.trim().split('\n').map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual(['first', 'request']);
  });
});

describe('TurnBatch', () => {
  function fakeFile() {
    const writes: string[] = [];
    let synced = 0;
    const file = {
      write: (data: Buffer) => (writes.push(data.toString('utf8')), true),
      flush: () => undefined,
      flushSync: () => (synced += 1),
    };
    return { writes, synced: () => synced, file };
  }

  it('writes the lines of one event-loop turn together, when the turn ends', async () => {
    const { file, writes } = fakeFile();
    const batch = new TurnBatch(file);
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

  it('keeps lines of any size and any character, whatever it holds already', async () => {
    const { file, writes } = fakeFile();
    const batch = new TurnBatch(file);
    const lines = ['a\n', `${'é€𝄞'.repeat(4000)}\n`, `${'x'.repeat(50_000)}\n`, 'b\n'];
    for (const line of lines) batch.write(line);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual([lines.join('')]);
  });

  it('hands over and flushes the pending lines synchronously on demand', () => {
    const { file, writes, synced } = fakeFile();
    const batch = new TurnBatch(file);
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
