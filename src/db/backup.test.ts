import { describe, expect, it } from 'vitest';
import { BackupError, ChunkReader, FORMAT, FORMAT_VERSION, frame, MAX_FRAME, migrationPlan, parseHeader } from './backup.js';

async function* chunks(...parts: Buffer[]): AsyncGenerator<Buffer> {
  for (const part of parts) yield await Promise.resolve(part);
}

const reader = (...parts: Buffer[]) => new ChunkReader(chunks(...parts)[Symbol.asyncIterator]());

async function collect(generator: AsyncGenerator<Buffer>): Promise<string[]> {
  const out: string[] = [];
  for await (const chunk of generator) out.push(chunk.toString());
  return out;
}

describe('migrationPlan', () => {
  const known = ['0001_a', '0002_b', '0003_c'];

  it('migrates an empty database to exactly the backup migrations', () => {
    expect(migrationPlan(known, known, [])).toEqual({ upTo: known, complete: true });
    expect(migrationPlan(['0001_a', '0002_b'], known, ['0001_a'])).toEqual({ upTo: ['0001_a', '0002_b'], complete: false });
  });

  it('refuses a backup of a newer or different schema', () => {
    expect(migrationPlan([...known, '0004_d'], known, [])).toEqual({ refuse: expect.stringMatching(/newer schema: migrations 0004_d are not known/) as string });
    expect(migrationPlan(['0001_a', '0002_x'], known, [])).toEqual({ refuse: expect.stringMatching(/migrations 0002_x are not known/) as string });
  });

  it('refuses a database migrated past the backup, or along another path', () => {
    expect(migrationPlan(['0001_a'], known, ['0001_a', '0002_b'])).toEqual({ refuse: expect.stringMatching(/up to 0002_b\) is not one the backup's schema \(up to 0001_a\)/) as string });
    expect('refuse' in migrationPlan(['0001_a', '0002_b'], known, ['0002_b'])).toBe(true);
  });
});

describe('parseHeader', () => {
  const header = {
    format: FORMAT,
    version: FORMAT_VERSION,
    createdAt: '2026-11-25T00:00:00.000Z',
    serverVersion: '18.1',
    migrations: ['0001_a'],
    tables: [{ name: 'users', columns: ['id', 'email'], rows: 2 }],
    sequences: [{ name: 'order_sequence', lastValue: '41', isCalled: true }],
  };

  it('reads a header written by a backup', () => {
    expect(parseHeader(JSON.stringify(header))).toEqual(header);
  });

  it('refuses other files, other versions and incomplete headers', () => {
    expect(() => parseHeader('{')).toThrow(/header is not JSON/);
    expect(() => parseHeader(JSON.stringify({ ...header, format: 'something' }))).toThrow(/not a Dots Exchange backup/);
    expect(() => parseHeader(JSON.stringify({ ...header, version: 2 }))).toThrow(/format version 2 is not known/);
    expect(() => parseHeader(JSON.stringify({ ...header, tables: [{ name: 'users', columns: [], rows: 1 }] }))).toThrow(BackupError);
    expect(() => parseHeader(JSON.stringify({ ...header, tables: [{ name: 'users', columns: ['id'], rows: -1 }] }))).toThrow(BackupError);
    expect(() => parseHeader(JSON.stringify({ ...header, sequences: [{ name: 's', lastValue: '1; drop', isCalled: true }] }))).toThrow(BackupError);
    expect(() => parseHeader(JSON.stringify({ ...header, migrations: undefined }))).toThrow(/lacks migrations/);
  });
});

describe('ChunkReader', () => {
  it('reads exact lengths across chunk boundaries', async () => {
    const r = reader(Buffer.from('ab'), Buffer.from('cdef'), Buffer.from('g'));
    expect((await r.take(3)).toString()).toBe('abc');
    expect((await r.take(1)).toString()).toBe('d');
    expect((await r.take(3)).toString()).toBe('efg');
    expect(await r.atEnd()).toBe(true);
  });

  it('reads the frames of consecutive tables, each up to its empty frame', async () => {
    const end = Buffer.alloc(4);
    const bytes = Buffer.concat([...frame(Buffer.from('1\tx\n')), ...frame(Buffer.from('2\ty\n')), end, end, ...frame(Buffer.from('3\n')), end]);
    // Split into 3-byte chunks, so that lengths and data straddle chunk boundaries.
    const parts: Buffer[] = [];
    for (let at = 0; at < bytes.length; at += 3) parts.push(bytes.subarray(at, at + 3));
    const r = reader(...parts);
    expect(await collect(r.table())).toEqual(['1\tx\n', '2\ty\n']);
    expect(await collect(r.table())).toEqual([]);
    expect(await collect(r.table())).toEqual(['3\n']);
    expect(await r.atEnd()).toBe(true);
  });

  it('refuses a file that ends inside a frame, and a frame longer than any a backup writes', async () => {
    await expect(collect(reader(Buffer.concat(frame(Buffer.from('1\tx\n'))).subarray(0, 6)).table())).rejects.toThrow(/truncated/);
    const huge = Buffer.alloc(4);
    huge.writeUInt32BE(MAX_FRAME + 1);
    await expect(collect(reader(huge).table())).rejects.toThrow(/a frame of 1048577 bytes/);
  });
});
