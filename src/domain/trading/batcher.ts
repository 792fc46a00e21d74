/** What one item of a batch came to: its value, or the error that only it gets. */
export type Outcome<R> = { value: R } | { error: unknown };

/** Items submitted together (submitTogether; submit: one item), settled together once their batch has run. */
interface Waiting<I, R> {
  items: I[];
  settle: (outcomes: Array<Outcome<R>>) => void;
}

/**
 * Runs items in batches, one batch at a time: items arriving when no batch is running start one at once;
 * items arriving meanwhile wait and go together in the next batch (at most `maxBatch`, in arrival order).
 * Nothing waits for a batch to fill: under light load every batch is one submission; under load the batches
 * grow by themselves (group commit). Items submitted together are never split across batches: a batch takes
 * whole submissions, and a submission larger than `maxBatch` goes alone in a batch of its own.
 */
export class Batcher<I, R> {
  #queue: Array<Waiting<I, R>> | undefined;

  constructor(
    private readonly run: (items: I[]) => Promise<Array<Outcome<R>>>,
    private readonly maxBatch: number,
  ) {}

  submit(item: I): Promise<R> {
    return this.submitTogether([item]).then(([outcome]) => {
      if ('value' in outcome!) return outcome.value;
      throw outcome!.error;
    });
  }

  /** Items that go in one batch, in this order; resolves with each one's outcome (never rejects). */
  submitTogether(items: I[]): Promise<Array<Outcome<R>>> {
    return new Promise((settle) => {
      if (items.length === 0) return settle([]);
      if (this.#queue) {
        this.#queue.push({ items, settle });
        return;
      }
      const fresh = [{ items, settle }];
      this.#queue = fresh;
      void this.#drain(fresh);
    });
  }

  async #drain(queue: Array<Waiting<I, R>>): Promise<void> {
    while (queue.length > 0) {
      let taken = 1;
      let size = queue[0]!.items.length;
      while (taken < queue.length && size + queue[taken]!.items.length <= this.maxBatch) size += queue[taken++]!.items.length;
      const batch = queue.splice(0, taken);
      const items = batch.flatMap((waiting) => waiting.items);
      let outcomes: Array<Outcome<R>>;
      try {
        outcomes = await this.run(items);
      } catch (error) {
        outcomes = items.map(() => ({ error }));
      }
      let next = 0;
      for (const waiting of batch) {
        waiting.settle(waiting.items.map(() => outcomes[next++] ?? { error: new Error('the batch gave no outcome for this item') }));
      }
    }
    this.#queue = undefined;
  }
}
