/**
 * The parts of a process, each registered with what stops it as soon as it has started: `stop` stops them
 * in the reverse order, whether the start completed or failed half-way, once however often it is called.
 */
export class Phases {
  readonly #stops: Array<() => unknown> = [];
  #stopping: Promise<void> | undefined;

  /** What stops the part that just started. */
  started(stop: () => unknown): void {
    this.#stops.push(stop);
  }

  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      for (let stop = this.#stops.pop(); stop; stop = this.#stops.pop()) await stop();
    })();
    return this.#stopping;
  }
}
