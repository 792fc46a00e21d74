import { describe, expect, it } from 'vitest';
import { IndexedItems, trigramsOf } from './indexed-items.js';
import { searchSource as source } from './search-source.fixture.js';

describe('trigramsOf', () => {
  it('makes trigrams as pg_trgm does', () => {
    expect(trigramsOf('rate').sort()).toEqual(['  r', ' ra', 'ate', 'rat', 'te '].sort());
  });
});

describe('IndexedItems', () => {
  it('lists the words a prefix begins in code point order', () => {
    // (UTF-16 order would put the character beyond U+FFFF before U+E000.)
    const ordered = IndexedItems.of([source('tag', '1', 'yy\u{10000}'), source('tag', '2', 'yy\ue000'), source('tag', '3', 'yyz')]);
    expect(ordered.prefixesOf('yy')).toEqual(['yyz', 'yy\ue000', 'yy\u{10000}']);
    ordered.put(source('tag', '4', 'yy\uffff'));
    expect(ordered.prefixesOf('yy')).toEqual(['yyz', 'yy\ue000', 'yy\uffff', 'yy\u{10000}']);
  });

  it('keeps an item as its fields say: words in order with the field breaks, status, series, tags, frequency', () => {
    const index = IndexedItems.of([source('event', '1', 'Fed Rate | | KXFED', { status: 'CLOSED', seriesId: 's1', tagIds: ['t1'], frequency: 'Weekly' })]);
    const item = index.get('event', '1')!;
    expect(item.text.map((entry) => entry?.word ?? '|')).toEqual(['fed', 'rate', '|', 'kxfed']);
    expect(item.words.map((entry) => entry.word)).toEqual(['fed', 'rate', 'kxfed']);
    expect(item).toMatchObject({ active: false, status: 'CLOSED', seriesId: 's1', tagIds: ['t1'], frequency: 'weekly' });
    expect(index.get('market', '1')).toBeUndefined();
  });

  it('replaces an item put again, and forgets the words no item holds any more', () => {
    const index = IndexedItems.of([source('event', '1', 'golden gate'), source('event', '2', 'gold price')]);
    expect(index.size).toBe(2);
    expect(index.prefixesOf('gol')).toEqual(['gold', 'golden']);
    expect(index.typosOf('pricy')).toEqual(['price']);
    index.put(source('event', '2', 'silver price', { status: 'CLOSED' }));
    expect(index.size).toBe(2);
    expect(index.get('event', '2')).toMatchObject({ active: false, words: [{ word: 'silver' }, { word: 'price' }] });
    expect(index.prefixesOf('gol')).toEqual(['golden']);
    index.remove('event', '2');
    index.remove('event', '2');
    expect(index.size).toBe(1);
    expect(index.typosOf('pricy')).toEqual([]);
    expect(index.prefixesOf('sil')).toEqual([]);
  });

  it('gives the id of a word gone to the next new word', () => {
    const index = IndexedItems.of([source('tag', '1', 'alpha'), source('tag', '2', 'beta')]);
    const betaId = index.get('tag', '2')!.wordIds[0];
    index.remove('tag', '2');
    index.put(source('tag', '3', 'gamma'));
    expect(index.get('tag', '3')!.wordIds).toEqual([betaId]);
  });

  it('orders items within a word: fewer words, active first, then id', () => {
    const index = IndexedItems.of([source('event', '10', 'fed'), source('event', '9', 'fed', { status: 'CLOSED' }), source('event', '2', 'fed rate')]);
    index.put(source('event', '1', 'fed'));
    const entry = index.get('event', '1')!.words[0]!;
    expect(entry.byKind.get('event')!.map((item) => item.id)).toEqual(['1', '10', '9', '2']);
  });
});
