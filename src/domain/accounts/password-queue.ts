import { rateLimited } from '../errors.js';

export interface PasswordQueueSettings {
  /** Password hashes computed at once (each takes a libuv thread and tens of MiB for a fraction of a second). */
  concurrency: number;
  /** Hashes waiting at most; beyond, a newcomer takes the place of the address holding the most, or is refused (429). */
  queue: number;
}

interface Waiter {
  address: string;
  /** Arrival order: of an address's waiters, the last to come is the first to lose its place. */
  seq: number;
  start(): void;
  refuse(error: Error): void;
}

const BUSY = 'too many sign-ins in progress: retry in a moment';

/**
 * Bounds the CPU password hashing takes, fairly between client addresses: `concurrency` hashes at once,
 * `queue` waiting, and the waiting ones served one address at a time in turn, so that a flood from some
 * addresses delays a sign-in from another by at most one turn of each. An address's share is the places
 * divided among the addresses holding any (running or waiting). When every place is taken, a newcomer from
 * an address below its share takes the newest waiting place of the address holding the most, if that one
 * is above its share (that place is refused, 429); otherwise the newcomer is refused at once, before any
 * hashing. One address alone may use every place. The limit: with as many addresses as places each holding
 * one, a sign-in from yet another address is refused until a place frees (Retry-After: 1).
 */
export class PasswordQueue {
  #running = 0;
  #waiting = 0;
  #seq = 0;
  /** Waiters by address, in the order the addresses take their turns. */
  readonly #turns = new Map<string, Waiter[]>();
  /** Places (running and waiting) each address holds. */
  readonly #held = new Map<string, number>();

  constructor(private readonly settings: PasswordQueueSettings) {}

  run<T>(address: string, work: () => Promise<T>): Promise<T> {
    if (this.#running < this.settings.concurrency) {
      this.#take(address);
      return this.#start(address, work);
    }
    if (this.#waiting >= this.settings.queue && !this.#evictFor(address)) return Promise.reject(rateLimited(BUSY, 1));
    this.#take(address);
    this.#waiting += 1;
    return new Promise<T>((resolve, reject) => {
      const waiter: Waiter = {
        address,
        seq: (this.#seq += 1),
        start: () => void this.#start(address, work).then(resolve, reject),
        refuse: reject,
      };
      const line = this.#turns.get(address);
      if (line) line.push(waiter);
      else this.#turns.set(address, [waiter]);
    });
  }

  async #start<T>(address: string, work: () => Promise<T>): Promise<T> {
    this.#running += 1;
    try {
      return await work();
    } finally {
      this.#running -= 1;
      this.#release(address);
      this.#next();
    }
  }

  /** The next address in turn starts its oldest waiter; the address goes to the back of the line. */
  #next(): void {
    const first = this.#turns.entries().next();
    if (first.done) return;
    const [address, line] = first.value;
    const waiter = line.shift()!;
    this.#turns.delete(address);
    if (line.length > 0) this.#turns.set(address, line);
    this.#waiting -= 1;
    waiter.start();
  }

  /**
   * Frees the newest waiting place of the address holding the most, if that is more than its share (the
   * places divided among the addresses holding any, this one included) and this one holds less; whether
   * one was freed.
   */
  #evictFor(address: string): boolean {
    const addresses = this.#held.size + (this.#held.has(address) ? 0 : 1);
    const share = Math.max(1, Math.floor((this.settings.concurrency + this.settings.queue) / addresses));
    if ((this.#held.get(address) ?? 0) >= share) return false;
    let victim: Waiter[] | undefined;
    let most = 0;
    for (const [other, line] of this.#turns) {
      const held = this.#held.get(other)!;
      if (held > most || (held === most && line.at(-1)!.seq > victim!.at(-1)!.seq)) {
        victim = line;
        most = held;
      }
    }
    if (!victim || most <= share) return false;
    const evicted = victim.pop()!;
    if (victim.length === 0) this.#turns.delete(evicted.address);
    this.#waiting -= 1;
    this.#release(evicted.address);
    evicted.refuse(rateLimited(BUSY, 1));
    return true;
  }

  #take(address: string): void {
    this.#held.set(address, (this.#held.get(address) ?? 0) + 1);
  }

  #release(address: string): void {
    const held = this.#held.get(address)! - 1;
    if (held === 0) this.#held.delete(address);
    else this.#held.set(address, held);
  }
}
