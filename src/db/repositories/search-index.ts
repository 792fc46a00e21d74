import { NamedStatement, type Db, type Queryable } from '../knex.js';
import type { SearchKind } from '../tables.js';

/**
 * The storage side of the in-memory search index each process holds: its searchable items, read whole once,
 * then the items that changed since, from `search_changes` (migration 0023), filled by triggers in the
 * writing transactions whatever wrote the rows.
 *
 * Which changes a read returns is decided by snapshots, not by times or increasing ids. Every read returns
 * the snapshot it saw (`pg_current_snapshot()`: the transactions committed by then, and those still running);
 * the next read passes it back as `since` and gets the items of the changes its own snapshot sees and `since`
 * did not: rows whose transaction is not visible in `since` (`pg_visible_in_snapshot`). A transaction that
 * began before `since` was taken and committed after it was running then (in its list of running
 * transactions), so its changes are returned by the first read that sees them committed, although its id is
 * lower than those of transactions `since` already saw: a "greater than the last id seen" rule would miss
 * it. A change the previous read saw is visible in `since`, so it is never returned twice; one committed
 * after this read's snapshot is not visible to this read, and comes with the next. Transactions below
 * `pg_snapshot_xmin(since)` had all finished when `since` was taken, so that bound (on the index of `xid`)
 * leaves out only rows `since` saw. A row's `xid` is its top-level transaction's (`pg_current_xact_id()`), the
 * id snapshots list, also when it was written in a savepoint.
 *
 * Rows are pruned by age (pruneSearchChanges): a process whose last read is older than the retention (or than
 * the longest writing transaction, whose rows carry its start time) must read the catalogue whole again.
 */

export interface SearchItemRecord {
  kind: SearchKind;
  /** The id as text. */
  id: string;
  /** The row's search_text as stored. */
  text: string;
  /**
   * Compared with lower(query text): series [lower(title), slug]; event [lower(title), slug]; market
   * [lower(title)]; tag [slug, lower(label)]; profile [lower(username), lower(name)]. Non-empty values only.
   */
  exactLower: string[];
  /** Compared with upper(lower(query text)): series, events and markets [ticker]; others []. Non-empty values only. */
  exactUpper: string[];
  /** Events and markets: their status; others null. */
  status: string | null;
  /** Events: their series' id as text; others null. */
  seriesId: string | null;
  /** Events: the ids (text) of their tags, in id order; others []. */
  tagIds: string[];
  /** Series: lower(frequency); others null. */
  frequency: string | null;
}

export interface SearchCatalogue {
  /** The snapshot the items were read from: `since` of the first readSearchChanges. */
  snapshot: string;
  items: SearchItemRecord[];
}

export interface SearchChanges {
  /** This read's snapshot: `since` of the next one. */
  snapshot: string;
  /** The items with a change committed since `since` (each once). */
  changed: Array<{ kind: SearchKind; id: string }>;
}

/** The columns of SearchItemRecord, as each kind's table gives them (`x`: the row). */
interface KindQuery {
  table: string;
  /** The id column's type, for a list of ids. */
  idType: 'bigint' | 'uuid';
  /** The values of exactLower, then of exactUpper (at most two each), in order. */
  exactLower: string[];
  exactUpper: string[];
  status: string;
  seriesId: string;
  frequency: string;
  /** A condition every searchable row meets. */
  searchable: string;
}

const KINDS: Record<SearchKind, KindQuery> = {
  series: { table: 'series', idType: 'bigint', exactLower: ['lower(x.title)', 'x.slug'], exactUpper: ['x.ticker'], status: 'null', seriesId: 'null', frequency: 'lower(x.frequency)', searchable: 'true' },
  event: { table: 'events', idType: 'bigint', exactLower: ['lower(x.title)', 'x.slug'], exactUpper: ['x.ticker'], status: 'x.status', seriesId: 'x.series_id::text', frequency: 'null', searchable: 'true' },
  market: { table: 'markets', idType: 'bigint', exactLower: ['lower(x.title)'], exactUpper: ['x.ticker'], status: 'x.status', seriesId: 'null', frequency: 'null', searchable: 'true' },
  tag: { table: 'tags', idType: 'bigint', exactLower: ['x.slug', 'lower(x.label)'], exactUpper: [], status: 'null', seriesId: 'null', frequency: 'null', searchable: 'true' },
  profile: { table: 'users', idType: 'uuid', exactLower: ['lower(x.username)', 'lower(x.name)'], exactUpper: [], status: 'null', seriesId: 'null', frequency: 'null', searchable: `x.username <> ''` },
};

const KIND_NAMES = Object.keys(KINDS) as SearchKind[];

/**
 * A row as read: the values of exactLower and exactUpper as columns (l0, l1, u0, u1; null or empty when
 * missing) and the tags' ids joined by commas, put in arrays here: pg's parsing of array columns took twice as
 * long as the rest of the read of 300,000 markets.
 */
interface ItemRead {
  id: string;
  text: string;
  l0: string | null;
  l1: string | null;
  u0: string | null;
  u1: string | null;
  status: string | null;
  series_id: string | null;
  tag_ids: string | null;
  frequency: string | null;
}

const columns = (prefix: string, expressions: string[]) => [0, 1].map((i) => `${expressions[i] ?? 'null::text'} as ${prefix}${i}`).join(', ');

/**
 * The searchable items of one kind: all of them, or those of `ids` (bound as one array). An event's tags come
 * from one grouped read of event_tags joined to the events (restricted to the same ids), not a subquery per row.
 */
function itemsQuery(kind: SearchKind, byIds: boolean): string {
  const k = KINDS[kind];
  const ids = byIds ? `= any(?::${k.idType}[])` : '';
  const tags =
    kind === 'event'
      ? `left join (select event_id, string_agg(tag_id::text, ',' order by tag_id) as tag_ids from event_tags
                     ${byIds ? `where event_id ${ids}` : ''} group by event_id) t on t.event_id = x.id`
      : '';
  return `
    select x.id::text as id, x.search_text as text, ${columns('l', k.exactLower)}, ${columns('u', k.exactUpper)},
           ${k.status} as status, ${k.seriesId} as series_id, ${kind === 'event' ? 't.tag_ids' : 'null::text'} as tag_ids, ${k.frequency} as frequency
      from ${k.table} x ${tags}
     where ${k.searchable}${byIds ? ` and x.id ${ids}` : ''}`;
}

/** Non-empty values only. */
function values(a: string | null, b: string | null): string[] {
  const out: string[] = [];
  if (a) out.push(a);
  if (b) out.push(b);
  return out;
}

const toItem = (kind: SearchKind, r: ItemRead): SearchItemRecord => ({
  kind,
  id: r.id,
  text: r.text,
  exactLower: values(r.l0, r.l1),
  exactUpper: values(r.u0, r.u1),
  status: r.status,
  seriesId: r.series_id,
  tagIds: r.tag_ids ? r.tag_ids.split(',') : [],
  frequency: r.frequency,
});

/** Every searchable item of every kind, and the snapshot they were read from (one REPEATABLE READ, read-only transaction). */
export async function readSearchCatalogue(db: Db): Promise<SearchCatalogue> {
  return db.transaction(
    async (tx) => {
      // The first statement: it takes the transaction's snapshot, which every read below shares.
      const { rows } = await tx.raw<{ rows: Array<{ snapshot: string }> }>('select pg_current_snapshot()::text as snapshot');
      const items: SearchItemRecord[] = [];
      for (const kind of KIND_NAMES) {
        const read = await tx.raw<{ rows: ItemRead[] }>(itemsQuery(kind, false));
        for (const r of read.rows) items.push(toItem(kind, r));
      }
      return { snapshot: rows[0]!.snapshot, items };
    },
    { isolationLevel: 'repeatable read', readOnly: true },
  );
}

/** Rows of `search_changes s` committed since the snapshot `since` (see the module's comment). */
function changedSince(since: string): string {
  return `s.xid >= pg_snapshot_xmin(${since}::pg_snapshot) and not pg_visible_in_snapshot(s.xid, ${since}::pg_snapshot)`;
}

/**
 * One statement, prepared once per connection (it runs before searches): the changes (by the index of `xid`)
 * and this statement's snapshot (the one it read them from). The binding is named q_since so that it is not
 * taken for a type in a cast.
 */
const READ_CHANGES = `
  select pg_current_snapshot()::text as snapshot,
         coalesce(c.kinds, '{}'::text[]) as kinds,
         coalesce(c.ids, '{}'::text[]) as ids
    from (select array_agg(d.kind order by d.kind, d.id) as kinds, array_agg(d.id order by d.kind, d.id) as ids
            from (select distinct s.kind, s.id from search_changes s where ${changedSince(':q_since')}) d) c`;

/** Whether something changed since the snapshot bound as `:q_since`: a condition for the searches' reads. */
export const CHANGED_SINCE = `exists (select 1 from search_changes s where ${changedSince(':q_since')})`;

const SEARCH_CHANGES = new NamedStatement<{ snapshot: string; kinds: SearchKind[]; ids: string[] }>('dots_search_changes', READ_CHANGES);
const SEARCH_CHANGED = new NamedStatement<{ changed: boolean }>('dots_search_changed', `select ${CHANGED_SINCE} as changed`);

/** What changed since `since` (the snapshot of the previous read; see the module's comment), and this read's snapshot. */
export async function readSearchChanges(db: Queryable, since: string): Promise<SearchChanges> {
  const row = (await SEARCH_CHANGES.run(db, { q_since: since })).rows[0]!;
  return { snapshot: row.snapshot, changed: row.kinds.map((kind, i) => ({ kind, id: row.ids[i]! })) };
}

/**
 * The current rows of these items, those that still exist and are searchable (an item not returned was
 * deleted, or is no longer searchable: an account whose username was emptied). One query per kind named.
 */
export async function readSearchItems(db: Queryable, changed: ReadonlyArray<{ kind: SearchKind; id: string }>): Promise<SearchItemRecord[]> {
  const items: SearchItemRecord[] = [];
  for (const kind of KIND_NAMES) {
    const ids = [...new Set(changed.filter((c) => c.kind === kind).map((c) => c.id))];
    if (ids.length === 0) continue;
    const bindings = kind === 'event' ? [ids, ids] : [ids];
    const read = await db.raw<{ rows: ItemRead[] }>(itemsQuery(kind, true), bindings);
    for (const r of read.rows) items.push(toItem(kind, r));
  }
  return items;
}

/** Whether anything changed since `since` (a search that read nothing else). */
export async function hasSearchChanges(db: Queryable, since: string): Promise<boolean> {
  return (await SEARCH_CHANGED.run(db, { q_since: since })).rows[0]!.changed;
}

/** Deletes the changes logged more than `retentionSeconds` ago; returns how many. */
export async function pruneSearchChanges(db: Queryable, retentionSeconds: number): Promise<number> {
  const result = await db.raw<{ rowCount: number }>('delete from search_changes where at < now() - make_interval(secs => ?)', [retentionSeconds]);
  return result.rowCount ?? 0;
}
