import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCatalogue } from '../../src/db/seed/generator.js';
import { TestService } from '../support/service.js';

/**
 * Relevance of both searches on a generated catalogue (480 events in 40 series, about 3 markets each, 32
 * tags) and two trader profiles: judged queries of every sort users type (several words, words reordered,
 * typos, tickers, slugs, partial words, punctuation, text that should find nothing), each with the items
 * that must appear in the top 3. Reports the mean reciprocal rank (a query scores 1/rank of its first
 * relevant item within the top 3, else 0; a query that should find nothing scores 1 when nothing is found)
 * of each operation, and fails below 0.9.
 *
 * `/api/search` is judged on its one list; `/public-search` on the bucket of the relevant kind (events, tags
 * or profiles). Where the relevant item is a series or a market, which `/public-search` does not return,
 * its judgement names the events that answer the same need (the series' events), or none.
 */

let api: TestService;

type Kind = 'series' | 'event' | 'market' | 'tag' | 'profile';
interface Item {
  kind: Kind;
  ticker: string;
}
interface Judgement {
  kind: Kind | 'none';
  /** Relevant when the item's ticker (slug, username) is one of these, or starts with one ending in `-`. */
  tickers: string[];
}
interface Judged {
  q: string;
  sort: string;
  api: Judgement;
  /** Defaults to `api` (events, tags and profiles are in both). */
  public?: Judgement;
}

const series = (...tickers: string[]): Judgement => ({ kind: 'series', tickers });
const event = (...tickers: string[]): Judgement => ({ kind: 'event', tickers });
/** Any event of these series. */
const eventOf = (...seriesTickers: string[]): Judgement => ({ kind: 'event', tickers: seriesTickers.map((t) => `${t}-`) });
const market = (...tickers: string[]): Judgement => ({ kind: 'market', tickers });
const tag = (...slugs: string[]): Judgement => ({ kind: 'tag', tickers: slugs });
const profile = (...usernames: string[]): Judgement => ({ kind: 'profile', tickers: usernames });
const none: Judgement = { kind: 'none', tickers: [] };

const JUDGED: Judged[] = [
  // several words
  { sort: 'words', q: 'fed rate 12', api: event('KXFEDRATE7-12') },
  { sort: 'words', q: 'treasury yield 5', api: event('KXTREASURYYI0-5') },
  { sort: 'words', q: 'unemployment rate daily', api: series('KXUNEMPLOYME2'), public: eventOf('KXUNEMPLOYME2') },
  { sort: 'words', q: 'arctic ice extent', api: series('KXARCTICICEE13'), public: eventOf('KXARCTICICEE13') },
  { sort: 'words', q: 'nyc high temperature annual', api: series('KXNYCHIGHTEM18'), public: eventOf('KXNYCHIGHTEM18') },
  { sort: 'words', q: 'box office opening 3', api: event('KXBOXOFFICEO20-3') },
  { sort: 'words', q: 'streaming top title', api: series('KXSTREAMINGT6', 'KXSTREAMINGT19'), public: eventOf('KXSTREAMINGT6', 'KXSTREAMINGT19') },
  { sort: 'words', q: 'ether price 7', api: event('KXETHERPRICE39-7') },
  { sort: 'words', q: 'approval rating monthly', api: series('KXAPPROVALRA24'), public: eventOf('KXAPPROVALRA24') },
  { sort: 'words', q: 'chicago snowfall annual 2', api: event('KXCHICAGOSNO31-2') },
  // words in another order
  { sort: 'reordered', q: '12 rate fed', api: event('KXFEDRATE7-12') },
  { sort: 'reordered', q: 'weekly album chart', api: series('KXALBUMCHART38'), public: eventOf('KXALBUMCHART38') },
  { sort: 'reordered', q: 'yield treasury', api: series('KXTREASURYYI0'), public: eventOf('KXTREASURYYI0') },
  { sort: 'reordered', q: 'milestone fusion 5m', api: series('KXFUSIONMILE5'), public: eventOf('KXFUSIONMILE5') },
  { sort: 'reordered', q: 'scorer top 4', api: event('KXTOPSCORER37-4') },
  { sort: 'reordered', q: 'sales retail hourly', api: series('KXRETAILSALE9'), public: eventOf('KXRETAILSALE9') },
  // punctuation
  { sort: 'punctuation', q: 'fed rate #12', api: event('KXFEDRATE7-12') },
  { sort: 'punctuation', q: 'Heat index (daily)', api: series('KXHEATINDEX3'), public: eventOf('KXHEATINDEX3') },
  { sort: 'punctuation', q: 'governor race #7', api: event('KXGOVERNORRA21-7') },
  { sort: 'punctuation', q: 'fed #12', api: event('KXFEDRATE7-12') },
  // typos
  { sort: 'typo', q: 'treasuy yield', api: series('KXTREASURYYI0'), public: eventOf('KXTREASURYYI0') },
  { sort: 'typo', q: 'unemploymnet rate', api: series('KXUNEMPLOYME2', 'KXUNEMPLOYME4'), public: eventOf('KXUNEMPLOYME2', 'KXUNEMPLOYME4') },
  { sort: 'typo', q: 'asteriod approach', api: series('KXASTEROIDAP34'), public: eventOf('KXASTEROIDAP34') },
  { sort: 'typo', q: 'festval headliner', api: series('KXFESTIVALHE15', 'KXFESTIVALHE16'), public: eventOf('KXFESTIVALHE15', 'KXFESTIVALHE16') },
  { sort: 'typo', q: 'snowfll chicago', api: series('KXCHICAGOSNO8', 'KXCHICAGOSNO31'), public: eventOf('KXCHICAGOSNO8', 'KXCHICAGOSNO31') },
  { sort: 'typo', q: 'eletion turnout', api: series('KXELECTIONTU14', 'KXELECTIONTU27'), public: eventOf('KXELECTIONTU14', 'KXELECTIONTU27') },
  { sort: 'typo', q: 'bitcon', api: tag('bitcoin') },
  { sort: 'typo', q: 'prodcut recall', api: series('KXPRODUCTREC36'), public: eventOf('KXPRODUCTREC36') },
  // tickers
  { sort: 'ticker', q: 'KXFEDRATE7-12', api: event('KXFEDRATE7-12') },
  { sort: 'ticker', q: 'KXFEDRATE7', api: series('KXFEDRATE7'), public: eventOf('KXFEDRATE7') },
  { sort: 'ticker', q: 'kxtopscorer37-4-m1', api: market('KXTOPSCORER37-4-M1'), public: none },
  { sort: 'ticker', q: 'KXWINDSPEED35-10', api: event('KXWINDSPEED35-10') },
  { sort: 'ticker', q: 'kxalbumchart38', api: series('KXALBUMCHART38'), public: eventOf('KXALBUMCHART38') },
  // slugs
  { sort: 'slug', q: 'kxfedrate7-12', api: event('KXFEDRATE7-12') },
  { sort: 'slug', q: 'kxheatindex3', api: series('KXHEATINDEX3'), public: eventOf('KXHEATINDEX3') },
  { sort: 'slug', q: 'us-politics', api: tag('us-politics') },
  { sort: 'slug', q: 'formula-1', api: tag('formula-1') },
  // partial words
  { sort: 'partial', q: 'treas yie', api: series('KXTREASURYYI0'), public: eventOf('KXTREASURYYI0') },
  { sort: 'partial', q: 'unemploy', api: series('KXUNEMPLOYME2', 'KXUNEMPLOYME4'), public: eventOf('KXUNEMPLOYME2', 'KXUNEMPLOYME4') },
  { sort: 'partial', q: 'fusion mile 5m', api: series('KXFUSIONMILE5'), public: eventOf('KXFUSIONMILE5') },
  { sort: 'partial', q: 'cabinet nom', api: series('KXCABINETNOM10'), public: eventOf('KXCABINETNOM10') },
  { sort: 'partial', q: 'wind sp 3', api: event('KXWINDSPEED35-3') },
  { sort: 'partial', q: 'asteroid appr', api: series('KXASTEROIDAP34'), public: eventOf('KXASTEROIDAP34') },
  // tags and profiles
  { sort: 'tag', q: 'Temperature', api: tag('temperature') },
  { sort: 'profile', q: 'marketmaven', api: profile('marketmaven') },
  { sort: 'profile', q: 'ada lovelace', api: profile('marketmaven') },
  { sort: 'profile', q: 'lovelac', api: profile('marketmaven') },
  // nothing to find
  { sort: 'no match', q: 'zqxjv', api: none },
  { sort: 'no match', q: 'fed zebra', api: none },
  { sort: 'no match', q: 'qqqq wwww', api: none },
  { sort: 'no match', q: 'xylophone', api: none },
];

const TOP = 3;

const relevant = (judgement: Judgement, item: Item) =>
  item.kind === judgement.kind && judgement.tickers.some((t) => (t.endsWith('-') ? item.ticker.startsWith(t) : item.ticker === t));

/** 1/rank of the first relevant item within the top 3 (1 for "nothing" when nothing is found), else 0. */
function reciprocalRank(judgement: Judgement, items: Item[]): number {
  if (judgement.kind === 'none') return items.length === 0 ? 1 : 0;
  const rank = items.slice(0, TOP).findIndex((item) => relevant(judgement, item));
  return rank < 0 ? 0 : 1 / (rank + 1);
}

async function nativeItems(q: string): Promise<Item[]> {
  const response = await api.get(`/api/search?q=${encodeURIComponent(q)}`);
  expect(response.status).toBe(200);
  return response.body.results.map((r: { kind: Kind; ticker: string }) => ({ kind: r.kind, ticker: r.ticker }));
}

/** The bucket of the judged kind (every bucket, for "nothing"). */
async function publicItems(q: string, judgement: Judgement): Promise<Item[]> {
  const response = await api.get(`/public-search?q=${encodeURIComponent(q)}`);
  expect(response.status).toBe(200);
  const { events, tags, profiles } = response.body as { events: Array<{ ticker: string }>; tags: Array<{ slug: string }>; profiles: Array<{ pseudonym: string }> };
  const buckets: Record<string, Item[]> = {
    event: events.map((e) => ({ kind: 'event', ticker: e.ticker })),
    tag: tags.map((t) => ({ kind: 'tag', ticker: t.slug })),
    profile: profiles.map((p) => ({ kind: 'profile', ticker: p.pseudonym })),
  };
  if (judgement.kind === 'none') return Object.values(buckets).flat();
  return buckets[judgement.kind] ?? [];
}

beforeAll(async () => {
  api = await TestService.start();
  await generateCatalogue(api.db, { events: 480, eventsPerSeries: 12, marketsPerEvent: 3, creatorIds: [], now: new Date('2026-11-22T12:00:00Z') });
  await api.register({ username: 'marketmaven', name: 'Ada Lovelace' });
  await api.register({ username: 'quietwatcher', name: 'Grace Hopper' });
}, 120_000);
afterAll(() => api?.stop());

describe('search relevance (judged queries on a generated catalogue)', () => {
  it('has at least 40 judged queries of every sort', () => {
    expect(JUDGED.length).toBeGreaterThanOrEqual(40);
    expect(new Set(JUDGED.map((j) => j.sort))).toEqual(new Set(['words', 'reordered', 'punctuation', 'typo', 'ticker', 'slug', 'partial', 'tag', 'profile', 'no match']));
  });

  for (const [operation, read] of [
    ['/api/search', (j: Judged) => nativeItems(j.q).then((items) => reciprocalRank(j.api, items))],
    ['/public-search', (j: Judged) => publicItems(j.q, j.public ?? j.api).then((items) => reciprocalRank(j.public ?? j.api, items))],
  ] as const) {
    it(`${operation}: mean reciprocal rank of at least 0.9`, async () => {
      const scores: Array<{ q: string; sort: string; rr: number }> = [];
      for (const judged of JUDGED) scores.push({ q: judged.q, sort: judged.sort, rr: await read(judged) });
      const mrr = scores.reduce((sum, s) => sum + s.rr, 0) / scores.length;
      const missed = scores.filter((s) => s.rr < 1).map((s) => `${s.sort} '${s.q}': ${s.rr.toFixed(2)}`);
      console.log(`search relevance ${operation}: MRR ${mrr.toFixed(3)} over ${scores.length} judged queries${missed.length ? `; below 1: ${missed.join(', ')}` : ''}`);
      expect(mrr).toBeGreaterThanOrEqual(0.9);
    });
  }
});
