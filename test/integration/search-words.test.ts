import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../src/db/knex.js';
import { wordsOf } from '../../src/domain/catalogue/search-index.js';
import { createTestDatabase } from '../support/service.js';

/**
 * The items' words are split by the database (`dots_search_words`, when it writes their searchable text) and a
 * query's by the word index (`wordsOf`): a character one takes for a letter and the other for a separator
 * would make an item unfindable by its own title. Both are compared here on the same texts (lower-cased as
 * the index lower-cases the database's words again).
 */

let db: Db;

beforeAll(async () => {
  db = createDb(await createTestDatabase(), 2);
});
afterAll(async () => {
  await db?.destroy();
});

const TEXTS = [
  'Fed rate #12',
  '  KXFED-12.5 (weekly)  ',
  'École — Zürich',
  '%% --',
  'tab\tand\nnew line',
  '🚀Rocket 😀 launch 🇺🇸 #12 👍🏽 ✨ ⭐ ☀️',
  '𠀀𠀁 𝐀bc 𐐀',
  '中文 日本語 한국어 ひらがな カタカナ',
  'ｆｕｌｌ ｗｉｄｔｈ ＡＢＣ１２',
  'Ελληνικά Русский עברית العربية ١٢٣',
  '€100, ©2026 & 50% (approx.)',
];

describe('the word split', () => {
  it('is the same in the database and in the word index', async () => {
    for (const text of TEXTS) {
      const { words } = (await db.raw('select dots_search_words(?) as words', [text])).rows[0];
      const fromDatabase = words === '' ? [] : (words as string).toLowerCase().split(' ');
      expect(wordsOf(text), JSON.stringify(text)).toEqual(fromDatabase);
    }
  });
});
