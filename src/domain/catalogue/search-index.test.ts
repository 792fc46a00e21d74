import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SearchKind } from './indexed-items.js';
import { SearchIndex, wordsOf } from './search-index.js';
import { searchSource as source } from './search-source.fixture.js';

const idsOf = (index: SearchIndex, text: string, kind: SearchKind, limit = 10) => index.best(index.query(text), kind, limit).map((c) => `${c.item.id}:${c.tier}`);

describe('wordsOf', () => {
  it('lower-cases and splits at every run of characters that are not letters or digits', () => {
    expect(wordsOf('Fed rate #12')).toEqual(['fed', 'rate', '12']);
    expect(wordsOf('  KXFED-12.5 (weekly)  ')).toEqual(['kxfed', '12', '5', 'weekly']);
    expect(wordsOf('École — Zürich')).toEqual(['école', 'zürich']);
    expect(wordsOf('%% --')).toEqual([]);
  });

  it('takes emoji and other pictographs for separators, and letters beyond U+FFFF for letters', () => {
    expect(wordsOf('🚀Rocket 😀 launch 🇺🇸 #12 👍🏽')).toEqual(['rocket', 'launch', '12']);
    expect(wordsOf('𠀀𠀁 𝐀bc 𐐀')).toEqual(['𠀀𠀁', '𝐀bc', '𐐨']);
  });
});

describe('SearchIndex', () => {
  const events = () =>
    SearchIndex.of([
      source('event', '1', 'fed rate 12 | kxfed 12 | fed rate 12 | fed rate | kxfed | fed rate', { exactLower: ['fed rate #12'], exactUpper: ['KXFED-12'] }),
      source('event', '2', 'rate of the fed | kxfed 2', { status: 'CLOSED' }),
      source('event', '3', 'rate of the fed | kxfed 3'),
      source('event', '4', 'bitcoin price weekly | btc 4'),
      source('event', '5', 'bitcoins held | btc 5 x'),
      source('event', '6', 'unemployment rate | unemp 6'),
    ]);

  it('ranks the exact text first, then every word whole in order, then in any order', () => {
    const index = events();
    expect(idsOf(index, 'Fed rate #12', 'event')).toEqual(['1:0']);
    // In order within one field: 1; any order: 3 (active) before 2 (closed), fewer words first.
    expect(idsOf(index, 'fed rate', 'event')).toEqual(['1:1', '3:2', '2:2']);
    expect(idsOf(index, 'rate fed', 'event')).toEqual(['3:1', '2:1', '1:2']);
  });

  it('matches prefixes only when whole words leave room, and typos after them', () => {
    const index = events();
    // "bitcoin" whole (4), "bitcoins" as a prefix (5); within a rank, by id when words and status are equal.
    expect(idsOf(index, 'bitcoin', 'event')).toEqual(['4:1', '5:3']);
    expect(idsOf(index, 'bitcoin', 'event', 1)).toEqual(['4:1']);
    expect(idsOf(index, 'bitc', 'event')).toEqual(['4:3', '5:3']);
    // One edit from "bitcoin"; two edits from a word of 7 letters or more.
    expect(idsOf(index, 'bitcon', 'event')).toEqual(['4:4']);
    expect(idsOf(index, 'unemploymnet', 'event')).toEqual(['6:4']);
    // Short words are never corrected, and digits never; a word inside another is no prefix.
    expect(idsOf(index, 'rte', 'event')).toEqual([]);
    expect(idsOf(index, '13', 'event')).toEqual([]);
    expect(idsOf(index, 'ed', 'event')).toEqual([]);
    expect(idsOf(index, 'zqxjv', 'event')).toEqual([]);
    expect(index.best(index.query('fed bitcoin'), 'event', 10)).toEqual([]);
  });

  it('finds the prefixes and corrections of words that came or went after a query asked for them', () => {
    const index = SearchIndex.of([source('event', '1', 'gold price | g 1')]);
    expect(idsOf(index, 'gol', 'event')).toEqual(['1:3']);
    expect(idsOf(index, 'goldn', 'event')).toEqual(['1:4']);
    index.put(source('event', '2', 'golden | g 2'));
    expect(idsOf(index, 'gol', 'event')).toEqual(['2:3', '1:3']); // fewer words first
    expect(idsOf(index, 'goldn', 'event')).toEqual(['2:4', '1:4']);
    index.remove('event', '1');
    expect(idsOf(index, 'gol', 'event')).toEqual(['2:3']);
    expect(idsOf(index, 'goldn', 'event')).toEqual(['2:4']);
  });

  it('filters, and counts up to a cap', () => {
    const index = events();
    const query = index.query('fed');
    expect(index.count(query, 'event', 100)).toBe(3);
    expect(index.count(query, 'event', 2)).toBe(2);
    expect(index.count(query, 'event', 100, (e) => e.status === 'CLOSED')).toBe(1);
    expect(index.best(query, 'event', 10, { filter: (e) => e.id !== '1' }).map((c) => c.item.id)).toEqual(['3', '2']);
  });

  it('takes changes: a replaced item is ranked by its new state, a removed one is gone with its words', () => {
    const index = events();
    expect(idsOf(index, 'bitc', 'event')).toEqual(['4:3', '5:3']);
    index.put(source('event', '4', 'bitcoin price weekly | btc 4', { status: 'RESOLVED' })); // active first now
    expect(idsOf(index, 'bitc', 'event')).toEqual(['5:3', '4:3']);
    expect(index.typosOf('ethereun')).toEqual([]);
    index.put(source('event', '7', 'ethereum merge | eth 7'));
    // Corrections follow the words the index holds now.
    expect(index.typosOf('ethereun')).toEqual(['ethereum']);
    expect(idsOf(index, 'ether', 'event')).toEqual(['7:3']);
    index.remove('event', '5');
    expect(idsOf(index, 'bitc', 'event')).toEqual(['4:3']);
    expect(index.query('bitcoins').words[0]!.prefixes).toEqual([]);
    expect(idsOf(index, 'bitcoins', 'event')).toEqual(['4:4']);
    expect(index.size).toBe(6);
  });

  it('matches words however many the index holds, added at once or later', () => {
    const index = SearchIndex.of(Array.from({ length: 3000 }, (_, i) => source('tag', String(i), `common word${i}`)));
    expect(idsOf(index, 'common word2999', 'tag', 1)).toEqual(['2999:1']);
    index.put(source('tag', 'late', `common ${Array.from({ length: 2000 }, (_, i) => `later${i}`).join(' ')}`));
    expect(idsOf(index, 'later1999 common', 'tag', 1)).toEqual(['late:2']);
    expect(index.count(index.query('common'), 'tag', 5000)).toBe(3001);
  });

  it('keeps kinds apart', () => {
    const index = SearchIndex.of([source('tag', '1', 'bitcoin | bitcoin'), source('event', '1', 'bitcoin rally | btc 1')]);
    expect(idsOf(index, 'bitcoin', 'tag')).toEqual(['1:1']);
    expect(idsOf(index, 'rally', 'tag')).toEqual([]);
  });
});

describe('SearchIndex.count', () => {
  // Words with prefixes among them ("rate", "rates") and corrections ("bitcoin", "bitcon"), some far more
  // common than others, so that counts both check the rarest word's items and AND bitmaps of common words.
  const vocabulary = fc.constantFrom('rate', 'rate', 'rate', 'rates', 'rated', 'fed', 'fed', 'bitcoin', 'bitcoin', 'bitcon', 'price', 'prize', 'weekly', 'week', 'gold', 'x1', 'x2');
  const text = fc.array(vocabulary, { minLength: 1, maxLength: 5 }).map((words) => words.join(' '));
  const status = fc.constantFrom('ACTIVE', 'CLOSED');
  const change = fc.oneof(
    fc.record({ put: fc.integer({ min: 1, max: 400 }), text, status }),
    fc.record({ remove: fc.integer({ min: 1, max: 400 }) }),
    fc.record({ count: fc.array(vocabulary, { minLength: 1, maxLength: 2 }).map((words) => words.join(' ')), cap: fc.integer({ min: 1, max: 300 }), closedOnly: fc.boolean() }),
  );

  it('counts what checking every item against every query word counts, while items come, change and go', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ text, status }), { minLength: 50, maxLength: 400 }), fc.array(change, { minLength: 10, maxLength: 60 }), (initial, changes) => {
        const items = new Map(initial.map((item, i) => [String(i + 1), item]));
        const index = SearchIndex.of([...items].map(([id, item]) => source('event', id, item.text, { status: item.status })));
        for (const step of changes) {
          if ('put' in step) {
            items.set(String(step.put), step);
            index.put(source('event', String(step.put), step.text, { status: step.status }));
          } else if ('remove' in step) {
            items.delete(String(step.remove));
            index.remove('event', String(step.remove));
          } else {
            const query = index.query(step.count);
            const accepts = (words: Set<string>) => query.words.every((w) => [w.word, ...w.prefixes, ...w.typos].some((word) => words.has(word)));
            const expected = [...items.values()].filter((item) => (!step.closedOnly || item.status === 'CLOSED') && accepts(new Set(wordsOf(item.text)))).length;
            const filter = step.closedOnly ? (item: { status: string | null }) => item.status === 'CLOSED' : undefined;
            expect(index.count(query, 'event', step.cap, filter)).toBe(Math.min(step.cap, expected));
          }
        }
      }),
      { numRuns: 60 },
    );
  });
});
