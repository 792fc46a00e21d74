/** What one item of a batch came to: its value, or the error that only it gets. */
export type Outcome<R> = { value: R } | { error: unknown };

interface Waiting<I, R> {
  item: I;
  resolve: (value: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Runs items in batches, one batch at a time per key: an item whose key has no batch running starts one
 * at once, alone; items of that key arriving meanwhile wait and go together in the next batch (at most
 * `maxBatch`, in arrival order). Nothing waits for a batch to fill: under light load every batch is one
 * item; under load the batches grow by themselves (group commit).
 */
export class KeyedBatcher<I, R> {
  readonly #queues = new Map<string, Array<Waiting<I, R>>>();

  constructor(
    private readonly run: (items: I[]) => Promise<Array<Outcome<R>>>,
    private readonly maxBatch: number,
  ) {}

  submit(key: string, item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const queue = this.#queues.get(key);
      if (queue) {
        queue.push({ item, resolve, reject });
        return;
      }
      const fresh = [{ item, resolve, reject }];
      this.#queues.set(key, fresh);
      void this.#drain(key, fresh);
    });
  }

  async #drain(key: string, queue: Array<Waiting<I, R>>): Promise<void> {
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
    this.#queues.delete(key);
  }
}
