import type { Queryable } from '../../db/knex.js';
import * as repo from '../../db/repositories/search-index.js';
import { SearchIndex } from './search-index.js';

/** Changes are kept this long for the processes that read them (then pruned). */
export const SEARCH_CHANGES_RETENTION_SECS = 600;
/** An index not brought up to date for this long is read again whole: changes it missed may be pruned. */
const STALE_AFTER_MS = 300_000;
/** While started, the index is brought up to date at least this often, and old changes pruned. */
const REFRESH_EVERY_MS = 60_000;

/**
 * This process's search index, kept current with the database: read whole at the first search, then, before
 * each search, brought up to date from `search_changes` (src/db/repositories/search-index.ts), whatever
 * process or statement made the changes. A search therefore sees every change committed before it began.
 *
 * One update runs at a time. A search that arrives while one runs waits for the next, which starts when it
 * ends and serves every search that arrived meanwhile: one short statement per update, however many searches
 * share it.
 */
export class LiveSearchIndex {
  private index: SearchIndex | undefined;
  private snapshot = '';
  private updatedAt = 0;
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private markLoaded!: () => void;
  /** Resolves once the index has been read whole for the first time (a search waits for that until then). */
  readonly loaded = new Promise<void>((resolve) => (this.markLoaded = resolve));

  constructor(
    private readonly db: Queryable,
    private readonly onError?: (error: unknown) => void,
  ) {}

  /** The index, with every change committed before the call. */
  async current(): Promise<SearchIndex> {
    await this.update();
    return this.index!;
  }

  /**
   * What `search` reads from the index as it is, checked in the same round trip: `search` is given the index
   * and the snapshot it holds every change up to, and answers, with what it read, whether anything changed
   * since that snapshot (src/db/repositories/search-index.ts, CHANGED_SINCE). If something did, the index is
   * brought up to date (`current`) and `search` runs again. A search thus costs one statement when nothing
   * changed, and still sees every change committed before it began.
   */
  async read<T>(search: (index: SearchIndex, since: string) => Promise<{ changed: boolean; value: T }>): Promise<T> {
    if (!this.index || Date.now() - this.updatedAt > STALE_AFTER_MS) await this.update();
    const first = await search(this.index!, this.snapshot);
    if (!first.changed) return first.value;
    const index = await this.current();
    return (await search(index, this.snapshot)).value;
  }

  /** Reads the index now (not at the first search), then keeps it up to date and prunes old changes (until `stop`). */
  start(): void {
    if (this.timer) return;
    this.update().catch((error: unknown) => this.onError?.(error));
    this.timer = setInterval(() => {
      this.update()
        .then(() => repo.pruneSearchChanges(this.db, SEARCH_CHANGES_RETENTION_SECS))
        .catch((error: unknown) => this.onError?.(error));
    }, REFRESH_EVERY_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await Promise.allSettled([this.running, this.queued]);
  }

  private update(): Promise<void> {
    if (!this.running) return this.run();
    // The update under way may have begun before the caller's changes committed: wait for the next one.
    this.queued ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        return this.run();
      });
    return this.queued;
  }

  private run(): Promise<void> {
    const running = this.refresh().finally(() => {
      if (this.running === running) this.running = undefined;
    });
    this.running = running;
    return running;
  }

  private async refresh(): Promise<void> {
    const startedAt = Date.now();
    if (!this.index || startedAt - this.updatedAt > STALE_AFTER_MS) {
      const catalogue = await repo.readSearchCatalogue(this.db);
      this.index = SearchIndex.of(catalogue.items);
      this.snapshot = catalogue.snapshot;
      this.markLoaded();
    } else {
      const changes = await repo.readSearchChanges(this.db, this.snapshot);
      if (changes.changed.length > 0) {
        const rows = await repo.readSearchItems(this.db, changes.changed);
        const present = new Set(rows.map((row) => `${row.kind}:${row.id}`));
        for (const { kind, id } of changes.changed) if (!present.has(`${kind}:${id}`)) this.index.remove(kind, id);
        for (const row of rows) this.index.put(row);
      }
      this.snapshot = changes.snapshot;
    }
    this.updatedAt = startedAt;
  }
}
