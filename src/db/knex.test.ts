import { describe, expect, it } from 'vitest';
import { arrayLiteral, NamedStatement, type Queryable } from './knex.js';

type Asked = Array<{ text: string; options: { name: string; values: unknown[] } }>;

/**
 * A Queryable that answers each statement with nothing and records what it was asked (the text, the name and
 * values) and what its query listeners were told: a pool, whose client hands out one of its connections, or a
 * transaction, whose client hands out the transaction's own connection; either way the connection's driver is
 * given the statement.
 */
function recorder(kind: 'transaction' | 'pool' = 'pool'): { db: Queryable; asked: Asked; told: string[]; connections: string[] } {
  const asked: Asked = [];
  const told: string[] = [];
  const connections: string[] = [];
  const connection = { query: ({ text, name, values }: { text: string; name: string; values: unknown[] }) => (asked.push({ text, options: { name, values } }), Promise.resolve({ rows: [] })) };
  const client = {
    emit: (event: string, ...args: unknown[]) => told.push(`${event}: ${(args.at(-1) as { sql: string }).sql}`),
    acquireConnection: () => Promise.resolve((connections.push(`acquired from the ${kind}`), connection)),
    releaseConnection: () => Promise.resolve(connections.push(`released to the ${kind}`)),
  };
  const db = { isTransaction: kind === 'transaction', client };
  return { db: db as unknown as Queryable, asked, told, connections };
}

describe('NamedStatement', () => {
  it('runs the positional text with the values in their places, bindings named twice or cast included', async () => {
    const statement = new NamedStatement('dots_test', `select :a::int[] as a, x::text, :b as b, :a as again from t where t.id = any(:ids)`);
    const { db, asked } = recorder();
    await statement.run(db, { ids: ['7', '8'], a: [1, 2], b: "it's" });
    expect(asked).toEqual([
      {
        text: 'select $1::int[] as a, x::text, $2 as b, $3 as again from t where t.id = any($4)',
        options: { name: 'dots_test', values: ['{1,2}', "it's", '{1,2}', '{7,8}'] },
      },
    ]);
  });

  it('keeps its text across runs, and makes it again when the bindings are named otherwise', async () => {
    const statement = new NamedStatement('dots_test', 'select :a as a, :b as b');
    const { db, asked } = recorder('transaction');
    await statement.run(db, { a: 1, b: 2 });
    await statement.run(db, { a: 3, b: 4 });
    await statement.run(db, { b: 5, a: 6 });
    expect(asked.map((q) => [q.text, q.options.values])).toEqual([
      ['select $1 as a, $2 as b', [1, 2]],
      ['select $1 as a, $2 as b', [3, 4]],
      ['select $1 as a, $2 as b', [6, 5]],
    ]);
  });

  it.each(['pool', 'transaction'] as const)("tells the %s's query listeners of each statement it hands to the driver of the connection its client gives", async (kind) => {
    const { db, asked, told, connections } = recorder(kind);
    await new NamedStatement('dots_test', 'select :a as a').run(db, { a: 1 });
    expect(told).toEqual(['query: select $1 as a', 'query-response: select $1 as a']);
    expect(asked).toEqual([{ text: 'select $1 as a', options: { name: 'dots_test', values: [1] } }]);
    expect(connections).toEqual([`acquired from the ${kind}`, `released to the ${kind}`]);
  });

  it('refuses a text with a question mark, which Knex would take for a placeholder when it runs it', async () => {
    const statement = new NamedStatement('dots_test', `select data \\? 'key' from t where id = :id`);
    await expect(statement.run(recorder().db, { id: 1 })).rejects.toThrow(/dots_test: a '\?' in its text/);
  });

  it('gives the driver the positional text and values without running them', () => {
    expect(new NamedStatement('dots_test', 'select :b as b, :a as a').positional({ a: 1, b: 2 })).toEqual({ text: 'select $1 as b, $2 as a', values: [2, 1] });
  });
});

describe('arrayLiteral', () => {
  it('writes ids, numbers, booleans and nulls as they are', () => {
    expect(arrayLiteral(['7', '8'])).toBe('{7,8}');
    expect(arrayLiteral([1, -2.5, 10n, true, false, null, undefined])).toBe('{1,-2.5,10,true,false,NULL,NULL}');
    expect(arrayLiteral(['0.45', '2026-11-27T12:00:00.000Z', 'c0ffee00-0000-4000-8000-000000000001', 'snake_case'])).toBe(
      '{0.45,2026-11-27T12:00:00.000Z,c0ffee00-0000-4000-8000-000000000001,snake_case}',
    );
    expect(arrayLiteral([])).toBe('{}');
  });

  it('quotes and escapes what would otherwise be read as something else', () => {
    expect(arrayLiteral(['', ' x', 'a,b', '{a}', 'say "hi"', 'back\\slash', 'null', 'NULL', 'é'])).toBe(
      '{""," x","a,b","{a}","say \\"hi\\"","back\\\\slash","null","NULL","é"}',
    );
  });

  it('leaves to the driver what is not a flat array of text, numbers and booleans', () => {
    const date = new Date(0);
    for (const value of [[date], [[1, 2]], [{ a: 1 }], [Buffer.from('x')]]) expect(arrayLiteral(value)).toBe(value);
    expect(arrayLiteral('text')).toBe('text');
    expect(arrayLiteral(null)).toBe(null);
  });
});
