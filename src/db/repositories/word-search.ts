import { ACTIVE_LEXEME } from '../migrations/0017_word_search.js';

/**
 * Word matching shared by both searches (`/api/search`: search.ts, `/public-search`: public-search.ts), as
 * SQL pieces: the query's forms (CTEs `q`, `q_prefix`, `q_typo`), and for each kind of item its candidates and
 * their rank.
 *
 * The query is split into words by `dots_search_words` (migration 0017: lower-cased, every run of characters
 * other than letters and digits a separator), the first SEARCH_WORDS_MAX of them. An item matches when each
 * word matches a word of its searchable text (`search_text`, `search_vector`): whole; as a prefix (a word of 2
 * or more characters: one of the first PREFIX_WORDS words of the dictionary that start with it, in byte
 * order); or, for a word of TYPO_MIN_LENGTH or more characters not all digits, as a typo: a dictionary word
 * within 1 edit (2 from TYPO_TWO_EDITS_FROM characters) among the TYPO_NEIGHBOURS nearest it by trigrams.
 * Each query word thus becomes an OR of at most 1 + PREFIX_WORDS + TYPO_NEIGHBOURS words, and the query three
 * tsqueries on the GIN index of `search_vector`: `whole` (every word whole), `prefix` (every word whole or
 * as a prefix) and `typo` (or a correction), the matches of each containing those of the one before. The
 * dictionary bounds what one query word can expand to, so that no query merges more than that many of the
 * index's lists, whatever the catalogue holds.
 *
 * Rank (0 best): 0 the whole text equals the title, ticker, slug or username (case-insensitive); 1 every word
 * whole, in the query's order within one field of the text; 2 every word whole; 3 every word whole or as a
 * prefix; 4 with typos. Within a rank: fewer distinct words in the item first, then active before not, then
 * higher volume, then (across kinds) kind, then id.
 *
 * Cost: each kind reads its exact matches (btree lookups, at most the page size), at most `:q_candidates`
 * items matching every word whole, and only when fewer than the page size do, at most `:q_candidates` prefix
 * matches, and only when fewer than the page size of those, at most `:q_candidates` typo matches (the rank of
 * each step is below every rank of the step before, so a step that is skipped had nothing to show); a step
 * whose query finds nothing more than the one before's (no word begins a longer word, no word has a
 * correction) is not read. The dictionary look-ups of a step run only when that step runs (or the count
 * needs them). Only these candidates are ranked: among more than `:q_candidates` items of a kind matching every word whole (active
 * ones read first), which are ranked is not specified.
 */

/** Words of a query that are matched; the rest are ignored. */
export const SEARCH_WORDS_MAX = 10;
/** Items of each kind read per step before ranking, per item of the page. */
export const CANDIDATES_PER_RESULT = 2;
/** Dictionary words a query word can be a prefix of (the first, in byte order). */
export const PREFIX_WORDS = 20;
/** Dictionary words read, nearest first, for each word that may be a typo. */
export const TYPO_NEIGHBOURS = 8;
/** A typo may be corrected from this many characters, not all digits. */
export const TYPO_MIN_LENGTH = 4;
/** From this many characters, two edits make a typo (one below). */
export const TYPO_TWO_EDITS_FROM = 7;

const lexeme = (word: string) => `'''' || ${word} || ''''`;

/**
 * CTEs `q` (the words; `whole`, the tsquery of every word whole; `in_order`, the regular expression of the words
 * in order within one field; `lower_text`, `upper_text`, the whole text for exact matches), `q_prefix`
 * (`prefix`; `alternatives`, each word's OR of itself and the words it begins) and `q_typo` (`typo`), from the
 * bound `:q_text`. With no word, the tsqueries are null and nothing matches. Words hold letters and digits
 * only, so they are quoted as they are.
 */
export const QUERY_CTES = `
  q as materialized (
    select w.words, lower(:q_text) as lower_text, upper(lower(:q_text)) as upper_text,
           (select string_agg(${lexeme('x')}, ' & ') from unnest(w.words) x)::tsquery as whole,
           '(^| )' || array_to_string(w.words, '( | [^|]* )') || '( |$)' as in_order
      from (select (string_to_array(nullif(dots_search_words(:q_text), ''), ' '))[1:${SEARCH_WORDS_MAX}] as words) w
  ),
  q_prefix as materialized (
    select array_agg(${lexeme('u.x')} || coalesce(c.completions, '') order by u.i) as alternatives, bool_or(c.completions is not null) as widens,
           string_agg('(' || ${lexeme('u.x')} || coalesce(c.completions, '') || ')', ' & ' order by u.i)::tsquery as prefix
      from unnest((select words from q)) with ordinality u (x, i)
      cross join lateral (select string_agg(' | ' || ${lexeme('d.word')}, '' order by d.word) as completions
                            from (select d.word from search_dictionary d
                                   where length(u.x) > 1 and d.word > u.x and d.word <= u.x || chr(1114111)
                                   order by d.word
                                   limit ${PREFIX_WORDS}) d
                          offset 0) c
  ),
  q_typo as materialized (
    select bool_or(c.corrections is not null) as widens,
           string_agg('(' || u.alternatives || coalesce(c.corrections, '') || ')', ' & ')::tsquery as typo
      from unnest((select words from q), (select alternatives from q_prefix)) u (x, alternatives)
      cross join lateral (select string_agg(' | ' || ${lexeme('d.word')}, '') as corrections
                            from (select d.word from search_dictionary d
                                   where length(u.x) >= ${TYPO_MIN_LENGTH} and u.x !~ '^[0-9]+$'
                                   order by d.word <-> u.x
                                   limit ${TYPO_NEIGHBOURS}) d
                           where not starts_with(d.word, u.x)
                             and abs(length(d.word) - length(u.x)) <= 2
                             and levenshtein_less_equal(d.word, u.x, 2) <= case when length(u.x) >= ${TYPO_TWO_EDITS_FROM} then 2 else 1 end
                          offset 0) c
  )`;

export const WHOLE = '(select whole from q)';
export const PREFIX = '(select prefix from q_prefix)';
export const TYPO = '(select typo from q_typo)';
export const LOWER_TEXT = '(select lower_text from q)';
export const UPPER_TEXT = '(select upper_text from q)';

/** One kind of item, as searched. */
export interface SearchKind {
  /** CTE name prefix. */
  name: string;
  /** `table alias`. */
  from: string;
  alias: string;
  /** The whole text equals the title, ticker, slug or username: each a lookup of a btree (or trigram) index. */
  exact: string;
  /** Active (true for kinds without a status) and volume (0 for kinds without one). */
  active: string;
  /** Whether the kind has a status (its vector marks its active rows with ACTIVE_LEXEME). */
  hasStatus?: boolean;
  volume: string;
  /** Conditions every candidate meets (filters), starting with ` and `. */
  where?: string;
}

/** The item rank (0 to 4) of a row of `kind` (see the module comment). */
export const rankOf = (kind: SearchKind) => {
  const a = kind.alias;
  return `case when ${kind.exact} then 0
               when ${a}.search_text ~ (select in_order from q) then 1
               when ${a}.search_vector @@ ${WHOLE} then 2
               when ${a}.search_vector @@ ${PREFIX} then 3
               else 4 end`;
};

/** Distinct words of the item (fewer first within a rank): its vector's lexemes, ACTIVE_LEXEME left out. */
export const wordsOf = (kind: SearchKind) => `length(${kind.alias}.search_vector)${kind.hasStatus ? ` - ${kind.active}::int` : ''}`;

/**
 * CTEs, for each kind, `<name>_exact`, `<name>_whole`, `<name>_prefix`, `<name>_typo` (ids), and `<name>_ranked`:
 * its best `:q_limit` candidates with `tier`, `words`, `active`, `volume` and its `columns`, numbered `n` in rank
 * order. `merged`: the kinds are ranked as one list (`/api/search`), so a kind's prefix (typo) step is needed
 * only while all kinds together have fewer than `:q_limit` whole (prefix) matches; otherwise each kind is a
 * list of its own.
 */
export function candidateCtes(kinds: ReadonlyArray<{ kind: SearchKind; columns: string }>, merged: boolean): string[] {
  const count = (kind: SearchKind, step: string) => `(select count(*) from ${kind.name}_${step})`;
  const fewer = (kind: SearchKind, step: string) =>
    ` and ${merged ? `(${kinds.map((k) => count(k.kind, step)).join(' + ')})` : count(kind, step)} < :q_limit`;
  const select = (kind: SearchKind, condition: string, gate: string, limit: string) =>
    `select ${kind.alias}.id from ${kind.from} where ${condition}${kind.where ?? ''}${gate} limit ${limit}`;
  /**
   * A step's candidates: for a kind with a status, the active ones first (the rank prefers them, and the word
   * index gives matches in no useful order; an active row's vector holds ACTIVE_LEXEME, so this is the same
   * index lookup), then, only when fewer than `:q_candidates` are, the others.
   */
  const step = (kind: SearchKind, name: string, query: string, gate: string) => {
    const vector = `${kind.alias}.search_vector`;
    if (!kind.hasStatus) return [`${kind.name}_${name} as (${select(kind, `${vector} @@ ${query}`, gate, ':q_candidates')})`];
    const active = `${kind.name}_${name}_active`;
    return [
      `${active} as (${select(kind, `${vector} @@ (${query} && '''${ACTIVE_LEXEME}'''::tsquery)`, gate, ':q_candidates')})`,
      `${kind.name}_${name} as (select id from ${active}
         union all (${select(kind, `${vector} @@ (${query} && '!''${ACTIVE_LEXEME}'''::tsquery)`, `${gate} and (select count(*) from ${active}) < :q_candidates`, ':q_candidates')}))`,
    ];
  };
  return [
    ...kinds.map(({ kind }) => `${kind.name}_exact as (${select(kind, `(${kind.exact})`, '', ':q_limit')})`),
    ...kinds.flatMap(({ kind }) => step(kind, 'whole', WHOLE, '')),
    // A step is read only when the one before left room on the page, and only when its query finds more than
    // the one before's (some word begins a word of the dictionary; some word has a correction).
    ...kinds.flatMap(({ kind }) => step(kind, 'prefix', PREFIX, `${fewer(kind, 'whole')} and (select widens from q_prefix)`)),
    ...kinds.flatMap(({ kind }) => step(kind, 'typo', TYPO, `${fewer(kind, 'whole')}${fewer(kind, 'prefix')} and (select widens from q_typo)`)),
    // Each candidate's row read by its id (a lateral subquery kept as such by OFFSET 0): a join could be
    // planned as a scan of the whole table.
    ...kinds.map(
      ({ kind, columns }) => `${kind.name}_ranked as (
       select r.*, row_number() over (order by r.tier, r.words, r.active desc, r.volume desc, r.id) as n
         from (select ${kind.alias}.id, ${rankOf(kind)} as tier, ${wordsOf(kind)} as words, ${kind.active} as active, ${kind.volume}::numeric as volume, ${columns}
                 from (select id from ${kind.name}_exact union select id from ${kind.name}_whole
                       union select id from ${kind.name}_prefix union select id from ${kind.name}_typo) c
                 cross join lateral (select * from ${kind.from} where ${kind.alias}.id = c.id offset 0) ${kind.alias}) r
        order by n
        limit :q_limit)`,
    ),
  ];
}

/** Exact-match conditions, each served by an index (migrations 0002-0004). */
export const EVENTS: SearchKind = {
  name: 'event',
  from: 'events e',
  alias: 'e',
  exact: `(lower(e.title) collate "C") = ${LOWER_TEXT} or (e.ticker collate "C") = ${UPPER_TEXT} or e.slug = ${LOWER_TEXT}`,
  active: `(e.status = 'ACTIVE')`,
  hasStatus: true,
  volume: 'e.volume',
};

export const MARKETS: SearchKind = {
  name: 'market',
  from: 'markets m',
  alias: 'm',
  exact: `(lower(m.title) collate "C") = ${LOWER_TEXT} or (m.ticker collate "C") = ${UPPER_TEXT}`,
  active: `(m.status = 'ACTIVE')`,
  hasStatus: true,
  volume: 'm.volume',
};

export const SERIES: SearchKind = {
  name: 'series',
  from: 'series s',
  alias: 's',
  exact: `s.ticker = ${UPPER_TEXT} or s.slug = ${LOWER_TEXT} or lower(s.title) = ${LOWER_TEXT}`,
  active: 'true',
  volume: '0',
};

export const TAGS: SearchKind = {
  name: 'tag',
  from: 'tags t',
  alias: 't',
  exact: `t.slug = ${LOWER_TEXT} or lower(t.label) = ${LOWER_TEXT}`,
  active: 'true',
  volume: '0',
};

/** Accounts without a username are not profiles: never found. */
export const PROFILES: SearchKind = {
  name: 'profile',
  from: 'users u',
  alias: 'u',
  exact: `(lower(u.username) collate "C") = ${LOWER_TEXT} or (lower(u.name) collate "C") = ${LOWER_TEXT}`,
  active: 'true',
  volume: '0',
  where: ` and u.username <> ''`,
};
