/** What one item of a batch came to: its value, or the error that only it gets. */
export type Outcome<R> = { value: R } | { error: unknown };

interface Waiting<I, R> {
  item: I;
  resolve: (value: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Runs items in batches, one batch at a time: an item arriving when no batch is running starts one at once,
 * alone; items arriving meanwhile wait and go together in the next batch (at most `maxBatch`, in arrival
 * order). Nothing waits for a batch to fill: under light load every batch is one item; under load the
 * batches grow by themselves (group commit).
 */
export class Batcher<I, R> {
  #queue: Array<Waiting<I, R>> | undefined;

  constructor(
    private readonly run: (items: I[]) => Promise<Array<Outcome<R>>>,
    private readonly maxBatch: number,
  ) {}

  submit(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      if (this.#queue) {
        this.#queue.push({ item, resolve, reject });
        return;
      }
      const fresh = [{ item, resolve, reject }];
      this.#queue = fresh;
      void this.#drain(fresh);
    });
  }

  async #drain(queue: Array<Waiting<I, R>>): Promise<void> {
    while (queue.length > 0) {
      const batch = queue.splice(0, this.maxBatch);
      let outcomes: Array<Outcome<R>>;
      try {
        outcomes = await this.run(batch.map((waiting) => waiting.item));
      } catch (error) {
        outcomes = batch.map(() => ({ error }));
      }
      batch.forEach((waiting, i) => {
        const outcome = outcomes[i] ?? { error: new Error('the batch gave no outcome for this item') };
        if ('value' in outcome) waiting.resolve(outcome.value);
        else waiting.reject(outcome.error);
      });
    }
    this.#queue = undefined;
  }
}
