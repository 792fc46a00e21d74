import { describe, expect, it } from 'vitest';
import { NamedStatement, type Queryable } from './knex.js';

/** A Queryable that answers each statement with what it was asked: the text and the options (name, values). */
function recorder(): { db: Queryable; asked: Array<{ text: string; options: { name: string; values: unknown[] } }> } {
  const asked: Array<{ text: string; options: { name: string; values: unknown[] } }> = [];
  const db = {
    raw: (text: string) => ({
      options: (options: { name: string; values: unknown[] }) => {
        asked.push({ text, options });
        return Promise.resolve({ rows: [] });
      },
    }),
  } as unknown as Queryable;
  return { db, asked };
}

describe('NamedStatement', () => {
  it('runs the positional text with the values in their places, bindings named twice or cast included', async () => {
    const statement = new NamedStatement('dots_test', `select :a::int[] as a, x::text, :b as b, :a as again from t where t.id = any(:ids)`);
    const { db, asked } = recorder();
    await statement.run(db, { ids: ['7', '8'], a: [1, 2], b: "it's" });
    expect(asked).toEqual([
      {
        text: 'select $1::int[] as a, x::text, $2 as b, $3 as again from t where t.id = any($4)',
        options: { name: 'dots_test', values: [[1, 2], "it's", [1, 2], ['7', '8']] },
      },
    ]);
  });

  it('keeps its text across runs, and makes it again when the bindings are named otherwise', async () => {
    const statement = new NamedStatement('dots_test', 'select :a as a, :b as b');
    const { db, asked } = recorder();
    await statement.run(db, { a: 1, b: 2 });
    await statement.run(db, { a: 3, b: 4 });
    await statement.run(db, { b: 5, a: 6 });
    expect(asked.map((q) => [q.text, q.options.values])).toEqual([
      ['select $1 as a, $2 as b', [1, 2]],
      ['select $1 as a, $2 as b', [3, 4]],
      ['select $1 as a, $2 as b', [6, 5]],
    ]);
  });

  it('refuses a text with a question mark, which Knex would take for a placeholder when it runs it', async () => {
    const statement = new NamedStatement('dots_test', `select data \\? 'key' from t where id = :id`);
    await expect(statement.run(recorder().db, { id: 1 })).rejects.toThrow(/dots_test: a '\?' in its text/);
  });

  it('gives the driver the positional text and values without running them', () => {
    expect(new NamedStatement('dots_test', 'select :b as b, :a as a').positional({ a: 1, b: 2 })).toEqual({ text: 'select $1 as b, $2 as a', values: [2, 1] });
  });
});
