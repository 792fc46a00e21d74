/**
 * What a service's work inside another service's transaction leaves to do once that transaction has
 * committed, and never if it rolls back: the caller hands it back to the service that did the work (its
 * `committed`), after its commit. Opaque to the caller.
 */
export interface AfterCommit {
  /** Markets whose figures changed (their events' rollups follow). */
  readonly marketIds: readonly string[];
  /** The real-time feed's notification of the records written (null: none). */
  readonly notification: string | null;
  /** What the work did, for the service's observer once committed. */
  readonly tally?: object;
}

export const NOTHING_AFTER_COMMIT: AfterCommit = { marketIds: [], notification: null };
