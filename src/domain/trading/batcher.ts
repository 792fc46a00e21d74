/** What one item of a batch came to: its value, or the error that only it gets. */
export type BatchResult<R> = { value: R } | { error: unknown };

/** Items submitted together (submitTogether; submit: one item), settled together once their batch has run. */
interface Waiting<I, R> {
  items: I[];
  settle: (outcomes: Array<BatchResult<R>>) => void;
}

/** A batch taken off the queue, running. */
interface Running<I, R> {
  batch: Array<Waiting<I, R>>;
  outcomes: Promise<Array<BatchResult<R>>>;
}

/**
 * Runs items in batches, one batch at a time: items arriving when no batch is running start one at once;
 * items arriving meanwhile wait and go together in the next batch (at most `maxBatch`, in arrival order),
 * which starts as soon as the one before has run, before that one's outcomes are handed out.
 * Nothing waits for a batch to fill: under light load every batch is one submission; under load the batches
 * grow by themselves (group commit). Items submitted together are never split across batches: a batch takes
 * whole submissions, and a submission larger than `maxBatch` goes alone in a batch of its own.
 */
export class Batcher<I, R> {
  #queue: Array<Waiting<I, R>> | undefined;

  constructor(
    private readonly run: (items: I[]) => Promise<Array<BatchResult<R>>>,
    private readonly maxBatch: number,
  ) {}

  submit(item: I): Promise<R> {
    return this.submitTogether([item]).then(([outcome]) => {
      if ('value' in outcome!) return outcome.value;
      throw outcome!.error;
    });
  }

  /** Items that go in one batch, in this order; resolves with each one's outcome (never rejects). */
  submitTogether(items: I[]): Promise<Array<BatchResult<R>>> {
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
    let running: Running<I, R> | undefined = this.#start(queue);
    while (running) {
      const outcomes = await running.outcomes;
      const { batch } = running;
      running = queue.length > 0 ? this.#start(queue) : undefined;
      // With a next batch started, this one's waiters hear on the next turn of the event loop: the next batch's
      // first statement goes to the database before their answers are made, not after.
      if (running) setImmediate(settleBatch, batch, outcomes);
      else settleBatch(batch, outcomes);
    }
    this.#queue = undefined;
  }

  /** Takes the next batch off the queue (whole submissions, up to maxBatch items) and starts running it. */
  #start(queue: Array<Waiting<I, R>>): Running<I, R> {
    let taken = 1;
    let size = queue[0]!.items.length;
    while (taken < queue.length && size + queue[taken]!.items.length <= this.maxBatch) size += queue[taken++]!.items.length;
    const batch = queue.splice(0, taken);
    const items = batch.flatMap((waiting) => waiting.items);
    const failed = (error: unknown) => items.map((): BatchResult<R> => ({ error }));
    let outcomes: Promise<Array<BatchResult<R>>>;
    try {
      outcomes = this.run(items).catch(failed);
    } catch (error) {
      outcomes = Promise.resolve(failed(error));
    }
    return { batch, outcomes };
  }
}

function settleBatch<I, R>(batch: ReadonlyArray<Waiting<I, R>>, outcomes: ReadonlyArray<BatchResult<R>>): void {
  let at = 0;
  for (const waiting of batch) {
    waiting.settle(waiting.items.map(() => outcomes[at++] ?? { error: new Error('the batch gave no outcome for this item') }));
  }
}
