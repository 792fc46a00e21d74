import type { Action, BookSide, Outcome, TimeInForce, TradeKind } from '../../db/tables.js';
import { MAX_PRICE_TICKS, MIN_PRICE_TICKS, TICKS_PER_DOT } from './money.js';

/**
 * The matching engine: one order book per market, pure and deterministic (no I/O, no clock, no
 * randomness). The caller loads the resting orders of a market, matches one incoming order, and
 * persists the difference (fills, maker remainders, cancelled orders, the resting remainder).
 *
 * Units (see money.ts): prices are integer ticks 1..99, counts are bigint lots of 0.0001 contract,
 * money is bigint micro-Dots (ticks x lots).
 *
 * The book is kept in the YES frame so that YES and NO orders meet in one book:
 *   buy YES at p -> bid at p        sell YES at p -> ask at p
 *   sell NO at p -> bid at 100 - p  buy NO at p   -> ask at 100 - p
 * Price-time priority; trades execute at the resting (maker) order's price.
 *
 * One file on purpose, over the usual 400 lines: the book's invariants (price levels, time priority, the
 * two frames, self-trade prevention, time in force) hold across all of it and are read together.
 */

export interface Order {
  readonly id: string;
  readonly accountId: string;
  readonly side: Outcome;
  readonly action: Action;
  /** Limit price in ticks, in the order's own outcome frame. */
  readonly price: number;
  /** Lots still to fill (for an incoming order: the lots to match now). */
  readonly remaining: bigint;
  /** Time priority: lower is earlier. Unique within the market. */
  readonly sequence: bigint;
}

export interface FillParty {
  readonly orderId: string;
  readonly accountId: string;
  readonly side: Outcome;
  readonly action: Action;
  /** Price of this party in its own outcome frame, ticks. */
  readonly price: number;
}

export interface Fill {
  readonly maker: FillParty;
  readonly taker: FillParty;
  readonly lots: bigint;
  /** Execution price in the YES frame (the maker's level), ticks. */
  readonly yesPrice: number;
  readonly kind: TradeKind;
  /**
   * Micro-Dots a buying taker saved against its limit ((limit - price) x lots): its reserve was
   * limit x lots, so the caller releases this much. 0n for a selling taker (sells reserve no cash).
   */
  readonly takerPriceImprovement: bigint;
}

export interface MatchOptions {
  readonly timeInForce: TimeInForce;
  readonly postOnly?: boolean;
}

export type MatchRejection = 'post_only_would_cross' | 'fok_not_fillable';

export interface MatchResult {
  /** In execution order. */
  readonly fills: Fill[];
  /** Lots of the incoming order filled (sum of fills). */
  readonly filled: bigint;
  /** Sum of the fills' takerPriceImprovement, micro-Dots. */
  readonly priceImprovement: bigint;
  /** Resting orders of the taker's own account met while matching, removed from the book (as they were). */
  readonly selfTradeCancelled: Order[];
  /** Lots of the incoming order now resting in the book (GTC remainder), 0n if none. */
  readonly restingRemainder: bigint;
  /** Lots of the incoming order cancelled (IOC remainder, or all of it when rejected). */
  readonly cancelledRemainder: bigint;
  /** Set when the order was refused as a whole; then nothing in the book changed and there are no fills. */
  readonly rejected?: MatchRejection;
}

export interface PriceLevel {
  /** YES-frame price, ticks. */
  readonly price: number;
  readonly lots: bigint;
  /** In time priority. */
  readonly orders: Order[];
}

/** Aggregated resting bids of each outcome, best first: [price ticks (outcome frame), lots]. */
export interface Depth {
  readonly yes: [number, bigint][];
  readonly no: [number, bigint][];
}

export function bookSideOf(side: Outcome, action: Action): BookSide {
  return (side === 'yes') === (action === 'buy') ? 'bid' : 'ask';
}

/** Outcome-frame price -> YES-frame price (and back: the mapping is its own inverse). */
export function yesPriceOf(side: Outcome, price: number): number {
  return side === 'yes' ? price : TICKS_PER_DOT - price;
}

/**
 * Signed cash of each party of a fill in micro-Dots: negative pays, positive receives. A mint sums
 * to -(100 x lots), a merge to +(100 x lots), a transfer to zero.
 */
export function fillCash(fill: Fill): { maker: bigint; taker: bigint } {
  const cash = (p: FillParty) => (p.action === 'buy' ? -1n : 1n) * BigInt(p.price) * fill.lots;
  return { maker: cash(fill.maker), taker: cash(fill.taker) };
}

// A resting order, as a node of its level's doubly linked FIFO (O(1) removal by id).
interface Node {
  readonly id: string;
  readonly accountId: string;
  readonly side: Outcome;
  readonly action: Action;
  readonly price: number;
  readonly sequence: bigint;
  remaining: bigint;
  readonly level: Level;
  prev: Node | undefined;
  next: Node | undefined;
}

interface Level {
  readonly side: BookSide;
  readonly price: number;
  head: Node | undefined;
  tail: Node | undefined;
  count: number;
  lots: bigint;
}

// Sentinels: no bid is "bid at 0", no ask is "ask at 100"; neither crosses any limit in 1..99.
const NO_BID = 0;
const NO_ASK = TICKS_PER_DOT;

export class OrderBook {
  // Indexed by YES-frame tick; index 0 unused. Levels are preallocated and simply empty when unused.
  readonly #levels: Record<BookSide, Level[]> = { bid: newLevels('bid'), ask: newLevels('ask') };
  readonly #byId = new Map<string, Node>();
  #bestBid = NO_BID;
  #bestAsk = NO_ASK;

  /** A book holding `orders` (e.g. loaded from storage); throws if they are invalid or cross. */
  constructor(orders: Iterable<Order> = []) {
    for (const order of orders) this.add(order);
  }

  get size(): number {
    return this.#byId.size;
  }

  /** Rests `order` at its place in time priority (by sequence). Throws on a duplicate id or if it would cross. */
  add(order: Order): void {
    checkOrder(order);
    if (this.#byId.has(order.id)) throw new Error(`order ${order.id} is already in the book`);
    const side = bookSideOf(order.side, order.action);
    const price = yesPriceOf(order.side, order.price);
    if (side === 'bid' ? price >= this.#bestAsk : price <= this.#bestBid) {
      throw new Error(`order ${order.id} would cross the book; match it instead`);
    }
    this.#insert(order, order.remaining);
  }

  get(id: string): Order | undefined {
    const node = this.#byId.get(id);
    return node && snapshot(node);
  }

  /** Removes an order (cancel); returns it as it was, or undefined if it is not in the book. */
  remove(id: string): Order | undefined {
    const node = this.#byId.get(id);
    if (!node) return undefined;
    this.#unlink(node);
    return snapshot(node);
  }

  /** Lowers an order's remainder in place, keeping its priority. Requires 0n < newRemaining < remaining. */
  decrease(id: string, newRemaining: bigint): Order {
    const node = this.#byId.get(id);
    if (!node) throw new Error(`order ${id} is not in the book`);
    if (typeof newRemaining !== 'bigint' || newRemaining <= 0n || newRemaining >= node.remaining) {
      throw new RangeError(`new remainder must be positive and below ${node.remaining}, got ${String(newRemaining)}`);
    }
    node.level.lots -= node.remaining - newRemaining;
    node.remaining = newRemaining;
    return snapshot(node);
  }

  /** Best bid in the YES frame, ticks. */
  bestBid(): number | undefined {
    return this.#bestBid === NO_BID ? undefined : this.#bestBid;
  }

  /** Best ask in the YES frame, ticks. */
  bestAsk(): number | undefined {
    return this.#bestAsk === NO_ASK ? undefined : this.#bestAsk;
  }

  /** Non-empty bid levels, best (highest) first. */
  bids(): PriceLevel[] {
    return this.#nonEmpty('bid').map(levelView);
  }

  /** Non-empty ask levels, best (lowest) first. */
  asks(): PriceLevel[] {
    return this.#nonEmpty('ask').map(levelView);
  }

  /** Every resting order: bids best first, then asks best first, each level in time priority. */
  orders(): Order[] {
    return [...this.bids(), ...this.asks()].flatMap((l) => l.orders);
  }

  /**
   * Resting bids of each outcome, best first, at most `maxLevels` each. YES bids are the bids; NO
   * bids are the asks seen from the NO side (an ask at p is a NO bid at 100 - p).
   */
  depth(maxLevels = Infinity): Depth {
    const take = (side: BookSide) => this.#nonEmpty(side).slice(0, maxLevels);
    return {
      yes: take('bid').map((l): [number, bigint] => [l.price, l.lots]),
      no: take('ask').map((l): [number, bigint] => [TICKS_PER_DOT - l.price, l.lots]),
    };
  }

  /**
   * Matches `incoming` against the book, MUTATING it: makers are filled or removed, self-trade
   * victims removed, a GTC remainder rested. Rejections (post-only would cross, FOK not fully
   * fillable now) leave the book untouched.
   *
   * Self-trade prevention: a resting order of the taker's own account that would be met is cancelled
   * instead, and matching goes on. A post-only order is rejected if anything (own orders included)
   * crosses it, so that the book never ends up crossed.
   */
  match(incoming: Order, options: MatchOptions): MatchResult {
    checkOrder(incoming);
    if (this.#byId.has(incoming.id)) throw new Error(`order ${incoming.id} is already in the book`);
    const { timeInForce, postOnly = false } = options;
    if (timeInForce !== 'GTC' && timeInForce !== 'IOC' && timeInForce !== 'FOK') {
      throw new RangeError(`unknown time in force ${String(timeInForce)}`);
    }
    const takerSide = bookSideOf(incoming.side, incoming.action);
    const makerSide: BookSide = takerSide === 'bid' ? 'ask' : 'bid';
    const limit = yesPriceOf(incoming.side, incoming.price);
    const crosses = takerSide === 'bid' ? (p: number) => p <= limit : (p: number) => p >= limit;
    const best = makerSide === 'ask' ? () => this.#bestAsk : () => this.#bestBid;

    const reject = (rejected: MatchRejection): MatchResult => ({
      fills: [],
      filled: 0n,
      priceImprovement: 0n,
      selfTradeCancelled: [],
      restingRemainder: 0n,
      cancelledRemainder: incoming.remaining,
      rejected,
    });
    if (postOnly && crosses(best())) return reject('post_only_would_cross');
    if (timeInForce === 'FOK' && this.#fillable(makerSide, limit, incoming.accountId, incoming.remaining) < incoming.remaining) {
      return reject('fok_not_fillable');
    }

    const fills: Fill[] = [];
    const selfTradeCancelled: Order[] = [];
    let remaining = incoming.remaining;
    let priceImprovement = 0n;
    while (remaining > 0n) {
      const price = best();
      if (!crosses(price)) break;
      const maker = this.#levels[makerSide][price]!.head!;
      if (maker.accountId === incoming.accountId) {
        this.#unlink(maker);
        selfTradeCancelled.push(snapshot(maker));
        continue;
      }
      const lots = maker.remaining < remaining ? maker.remaining : remaining;
      const fill = makeFill(maker, incoming, lots, price);
      fills.push(fill);
      priceImprovement += fill.takerPriceImprovement;
      remaining -= lots;
      maker.remaining -= lots;
      maker.level.lots -= lots;
      if (maker.remaining === 0n) this.#unlink(maker);
    }

    const rests = remaining > 0n && timeInForce === 'GTC';
    if (rests) this.#insert(incoming, remaining);
    return {
      fills,
      filled: incoming.remaining - remaining,
      priceImprovement,
      selfTradeCancelled,
      restingRemainder: rests ? remaining : 0n,
      cancelledRemainder: rests ? 0n : remaining,
    };
  }

  /**
   * Throws if any internal invariant fails: links and indexes agree, levels hold their own orders in
   * strictly increasing sequence with correct totals, best prices are right, the book is not crossed.
   */
  validateInternalState(): void {
    const fail = (msg: string): never => {
      throw new Error(`order book inconsistent: ${msg}`);
    };
    let seen = 0;
    for (const side of ['bid', 'ask'] as const) {
      const levels = this.#levels[side];
      if (levels.length !== MAX_PRICE_TICKS + 1) fail(`${side} has ${levels.length} level slots`);
      let best = side === 'bid' ? NO_BID : NO_ASK;
      for (let price = MIN_PRICE_TICKS; price <= MAX_PRICE_TICKS; price++) {
        const level = levels[price]!;
        if (level.side !== side || level.price !== price) fail(`${side} level ${price} is misplaced`);
        let count = 0;
        let lots = 0n;
        let prev: Node | undefined;
        for (let node = level.head; node; node = node.next) {
          const where = `${side} ${price} order ${node.id}`;
          if (node.prev !== prev) fail(`${where}: broken back link`);
          if (node.level !== level) fail(`${where}: points at another level`);
          if (bookSideOf(node.side, node.action) !== side || yesPriceOf(node.side, node.price) !== price) {
            fail(`${where}: sits at the wrong side or price`);
          }
          if (node.remaining <= 0n) fail(`${where}: remainder ${node.remaining}`);
          if (prev && prev.sequence >= node.sequence) fail(`${where}: out of time priority`);
          if (this.#byId.get(node.id) !== node) fail(`${where}: index mismatch`);
          count++;
          lots += node.remaining;
          prev = node;
        }
        if (level.tail !== prev) fail(`${side} ${price}: wrong tail`);
        if (count !== level.count || lots !== level.lots) fail(`${side} ${price}: totals ${level.count}/${level.lots}, actual ${count}/${lots}`);
        // Ascending prices: the best bid is the last non-empty level, the best ask the first.
        if (count > 0 && (side === 'bid' || best === NO_ASK)) best = price;
        seen += count;
      }
      const cached = side === 'bid' ? this.#bestBid : this.#bestAsk;
      if (cached !== best) fail(`best ${side} cached ${cached}, actual ${best}`);
    }
    if (seen !== this.#byId.size) fail(`index holds ${this.#byId.size} orders, levels ${seen}`);
    if (this.#bestBid >= this.#bestAsk) fail(`crossed: bid ${this.#bestBid} >= ask ${this.#bestAsk}`);
  }

  // Lots of other accounts' orders within the limit, counted until `need` is reached.
  #fillable(side: BookSide, limit: number, accountId: string, need: bigint): bigint {
    let total = 0n;
    const step = side === 'ask' ? 1 : -1;
    for (let price = side === 'ask' ? this.#bestAsk : this.#bestBid; side === 'ask' ? price <= limit : price >= limit; price += step) {
      for (let node = this.#levels[side][price]!.head; node; node = node.next) {
        if (node.accountId !== accountId) total += node.remaining;
        if (total >= need) return total;
      }
    }
    return total;
  }

  #insert(order: Order, remaining: bigint): void {
    const side = bookSideOf(order.side, order.action);
    const price = yesPriceOf(order.side, order.price);
    const level = this.#levels[side][price]!;
    // Usually the newest: walk back from the tail to find its place by sequence.
    let after = level.tail;
    while (after && after.sequence > order.sequence) after = after.prev;
    if (after && after.sequence === order.sequence) throw new Error(`sequence ${order.sequence} already used at this level`);
    const node: Node = {
      id: order.id,
      accountId: order.accountId,
      side: order.side,
      action: order.action,
      price: order.price,
      sequence: order.sequence,
      remaining,
      level,
      prev: after,
      next: after ? after.next : level.head,
    };
    if (node.next) node.next.prev = node;
    else level.tail = node;
    if (after) after.next = node;
    else level.head = node;
    level.count++;
    level.lots += remaining;
    this.#byId.set(node.id, node);
    if (side === 'bid' && price > this.#bestBid) this.#bestBid = price;
    if (side === 'ask' && price < this.#bestAsk) this.#bestAsk = price;
  }

  #unlink(node: Node): void {
    const level = node.level;
    if (node.prev) node.prev.next = node.next;
    else level.head = node.next;
    if (node.next) node.next.prev = node.prev;
    else level.tail = node.prev;
    level.count--;
    level.lots -= node.remaining;
    this.#byId.delete(node.id);
    if (level.count > 0) return;
    // The level emptied: if it was the best, move to the next non-empty one (at most 98 steps).
    if (level.side === 'bid' && level.price === this.#bestBid) {
      let p = level.price - 1;
      while (p >= MIN_PRICE_TICKS && this.#levels.bid[p]!.count === 0) p--;
      this.#bestBid = p >= MIN_PRICE_TICKS ? p : NO_BID;
    } else if (level.side === 'ask' && level.price === this.#bestAsk) {
      let p = level.price + 1;
      while (p <= MAX_PRICE_TICKS && this.#levels.ask[p]!.count === 0) p++;
      this.#bestAsk = p <= MAX_PRICE_TICKS ? p : NO_ASK;
    }
  }

  #nonEmpty(side: BookSide): Level[] {
    const levels = this.#levels[side].filter((l) => l.count > 0);
    return side === 'bid' ? levels.reverse() : levels;
  }
}

/** `book.match(incoming, options)`: see OrderBook.match (mutates the book). */
export function match(book: OrderBook, incoming: Order, options: MatchOptions): MatchResult {
  return book.match(incoming, options);
}

/** Every price level of one side, empty. A plain loop: a book is made per market in every placement transaction, and Array.from's callback form costs five times as much. */
function newLevels(side: BookSide): Level[] {
  const levels: Level[] = [];
  for (let price = 0; price <= MAX_PRICE_TICKS; price++) levels.push({ side, price, head: undefined, tail: undefined, count: 0, lots: 0n });
  return levels;
}

function makeFill(maker: Node, taker: Order, lots: bigint, yesPrice: number): Fill {
  const takerPrice = yesPriceOf(taker.side, yesPrice);
  // Same outcome on opposite book sides means one buys and one sells it; different outcomes mean
  // both buy (mint) or both sell (merge).
  const kind: TradeKind = maker.side === taker.side ? `transfer_${taker.side}` : taker.action === 'buy' ? 'mint' : 'merge';
  return {
    maker: { orderId: maker.id, accountId: maker.accountId, side: maker.side, action: maker.action, price: maker.price },
    taker: { orderId: taker.id, accountId: taker.accountId, side: taker.side, action: taker.action, price: takerPrice },
    lots,
    yesPrice,
    kind,
    takerPriceImprovement: taker.action === 'buy' ? BigInt(taker.price - takerPrice) * lots : 0n,
  };
}

function snapshot(node: Node): Order {
  const { id, accountId, side, action, price, remaining, sequence } = node;
  return { id, accountId, side, action, price, remaining, sequence };
}

function levelView(level: Level): PriceLevel {
  const orders: Order[] = [];
  for (let node = level.head; node; node = node.next) orders.push(snapshot(node));
  return { price: level.price, lots: level.lots, orders };
}

function checkOrder(order: Order): void {
  const bad = (what: string): never => {
    throw new RangeError(`invalid order ${String(order?.id)}: ${what}`);
  };
  if (typeof order.id !== 'string' || order.id === '') bad('id');
  if (typeof order.accountId !== 'string' || order.accountId === '') bad('accountId');
  if (order.side !== 'yes' && order.side !== 'no') bad('side');
  if (order.action !== 'buy' && order.action !== 'sell') bad('action');
  if (!Number.isInteger(order.price) || order.price < MIN_PRICE_TICKS || order.price > MAX_PRICE_TICKS) bad('price');
  if (typeof order.remaining !== 'bigint' || order.remaining <= 0n) bad('remaining');
  if (typeof order.sequence !== 'bigint') bad('sequence');
}
