import { bookSideOf, fillCash, type Fill } from './book.js';
import { lotsOf, notionalMicroDots, TICKS_PER_DOT, ticksOf } from './money.js';
import type { Action, FillRole, MarketResult, Outcome, TradeKind } from '../../db/tables.js';

/**
 * What one trading transaction does to accounts, orders, positions and markets, accumulated in exact
 * units (lots, ticks, micro-Dots) before anything is written. Pure: a command fills a Changeset from
 * the matching engine's result (or from cancels, decreases and settlements), and its TradingTransaction
 * checks it against the locked balances and persists it.
 *
 * Money rules:
 * - a buy reserves its limit x count (cash -> reserved) at placement; a fill consumes limit x lots of the
 *   reserve, pays the execution price x lots, and returns the difference (price improvement) to cash;
 *   cancel and decrease return limit x lots to cash;
 * - a sell reserves held shares; a fill removes them and pays the execution price x lots in cash;
 * - mint (two buyers) creates a YES+NO pair backed by the 1 Dot the buyers paid together; merge (two
 *   sellers) destroys a pair and pays out its 1 Dot.
 * Each movement of Dots is one ledger entry: `amount` changes the account's holdings (cash + reserved),
 * `reservedChange` its reserved part.
 */

export interface LiveOrder {
  readonly id: string;
  readonly accountId: string;
  readonly marketId: string;
  readonly side: Outcome;
  readonly action: Action;
  /** Outcome-frame limit, ticks. */
  readonly price: number;
  /** Lots still live. */
  readonly remaining: bigint;
}

/** The live order of an order row (decimals as stored). */
export function liveOrderOf(row: { id: string; account_id: string; market_id: string; side: Outcome; action: Action; price: string; remaining: string }): LiveOrder {
  return {
    id: row.id,
    accountId: row.account_id,
    marketId: String(row.market_id),
    side: row.side,
    action: row.action,
    price: ticksOf(row.price),
    remaining: lotsOf(row.remaining),
  };
}

export type LedgerReference = { order: string } | { trade: number; role: FillRole } | { settlement: string };

export interface LedgerMove {
  readonly accountId: string;
  readonly marketId: string;
  readonly kind: 'reserve' | 'release' | 'fill' | 'settlement';
  /** Change of cash + reserved, micro-Dots. */
  readonly amount: bigint;
  /** Change of reserved, micro-Dots. */
  readonly reservedChange: bigint;
  readonly reference: LedgerReference;
}

export interface TradeEffect {
  readonly marketId: string;
  readonly fill: Fill;
  /** The outcome the taker bought, or the one opposite to what it sold (the Kalshi convention). */
  readonly takerSide: Outcome;
}

export interface MarketEffect {
  /** Contracts traded, lots. */
  volume: bigint;
  /** Resting notional (price x remaining of live orders), micro-Dots. */
  liquidity: bigint;
  /** Outstanding YES+NO pairs, lots. */
  openInterest: bigint;
  /** YES-frame price of the last execution, ticks. */
  lastYesPrice?: number;
}

export interface BalanceDelta {
  cash: bigint;
  reserved: bigint;
}

export interface PositionDelta {
  readonly accountId: string;
  readonly marketId: string;
  readonly side: Outcome;
  shares: bigint;
  reserved: bigint;
}

export type CancelReason = 'requested' | 'expired' | 'self_trade' | 'market_closed' | 'market_resolved' | 'heartbeat';

export class Changeset {
  readonly balances = new Map<string, BalanceDelta>();
  readonly ledger: LedgerMove[] = [];
  readonly positions = new Map<string, PositionDelta>();
  readonly markets = new Map<string, MarketEffect>();
  readonly trades: TradeEffect[] = [];
  /** Resting orders filled as makers: order id -> lots. */
  readonly makerFills = new Map<string, bigint>();
  readonly cancels: Array<{ id: string; reason: CancelReason }> = [];
  readonly decreases: Array<{ id: string; remaining: bigint }> = [];

  /** Every account whose balance or position changes, sorted (the order their rows are locked in). */
  accounts(): string[] {
    const ids = new Set<string>(this.balances.keys());
    for (const p of this.positions.values()) ids.add(p.accountId);
    return [...ids].sort();
  }

  market(marketId: string): MarketEffect {
    let effect = this.markets.get(marketId);
    if (!effect) {
      effect = { volume: 0n, liquidity: 0n, openInterest: 0n };
      this.markets.set(marketId, effect);
    }
    return effect;
  }

  /** Places an order's reserve: cash for a buy (limit x lots), shares for a sell. */
  reserve(order: { id: string; accountId: string; marketId: string; side: Outcome; action: Action; price: number }, lots: bigint): void {
    if (order.action === 'buy') {
      const micro = notionalMicroDots(order.price, lots);
      this.#move(order.accountId, order.marketId, 'reserve', 0n, micro, { order: order.id });
    } else {
      this.#position(order.accountId, order.marketId, order.side).reserved += lots;
    }
  }

  /** Gives back the reserve of `lots` of an order (cancel, decrease, IOC/FOK remainder). */
  release(order: { id: string; accountId: string; marketId: string; side: Outcome; action: Action; price: number }, lots: bigint): void {
    if (lots === 0n) return;
    if (order.action === 'buy') {
      const micro = notionalMicroDots(order.price, lots);
      this.#move(order.accountId, order.marketId, 'release', 0n, -micro, { order: order.id });
    } else {
      this.#position(order.accountId, order.marketId, order.side).reserved -= lots;
    }
  }

  /** A new order's remainder now rests in the book. */
  rest(order: LiveOrder): void {
    this.market(order.marketId).liquidity += notionalMicroDots(order.price, order.remaining);
  }

  /** Cancels what remains of a resting order and releases its reserve. */
  cancelResting(order: LiveOrder, reason: CancelReason): void {
    this.release(order, order.remaining);
    this.market(order.marketId).liquidity -= notionalMicroDots(order.price, order.remaining);
    this.cancels.push({ id: order.id, reason });
  }

  /** Lowers a resting order's remainder to `remaining` (0 < remaining < order.remaining), keeping its priority. */
  decreaseResting(order: LiveOrder, remaining: bigint): void {
    if (remaining <= 0n || remaining >= order.remaining) throw new RangeError(`decrease to ${remaining} of ${order.remaining}`);
    const removed = order.remaining - remaining;
    this.release(order, removed);
    this.market(order.marketId).liquidity -= notionalMicroDots(order.price, removed);
    this.decreases.push({ id: order.id, remaining });
  }

  /**
   * One execution: both parties' cash, reserves and shares, the maker's order, the market's figures.
   * `takerLimit` is the taker's own limit (ticks), whose reserve the fill consumes for a buying taker.
   */
  applyFill(marketId: string, fill: Fill, takerLimit: number): void {
    const index = this.trades.length;
    this.trades.push({ marketId, fill, takerSide: bookSideOf(fill.taker.side, fill.taker.action) === 'bid' ? 'yes' : 'no' });
    const cash = fillCash(fill);
    const parties = [
      { party: fill.maker, role: 'maker' as const, cash: cash.maker, limit: fill.maker.price },
      { party: fill.taker, role: 'taker' as const, cash: cash.taker, limit: takerLimit },
    ];
    for (const { party, role, cash: amount, limit } of parties) {
      const position = this.#position(party.accountId, marketId, party.side);
      if (party.action === 'buy') {
        this.#move(party.accountId, marketId, 'fill', amount, -notionalMicroDots(limit, fill.lots), { trade: index, role });
        position.shares += fill.lots;
      } else {
        this.#move(party.accountId, marketId, 'fill', amount, 0n, { trade: index, role });
        position.shares -= fill.lots;
        position.reserved -= fill.lots;
      }
    }
    this.makerFills.set(fill.maker.orderId, (this.makerFills.get(fill.maker.orderId) ?? 0n) + fill.lots);
    const market = this.market(marketId);
    market.liquidity -= notionalMicroDots(fill.maker.price, fill.lots);
    market.volume += fill.lots;
    market.openInterest += openInterestChange(fill.kind, fill.lots);
    market.lastYesPrice = fill.yesPrice;
  }

  /**
   * Adds everything `other` does after what this one does (placements committed together: each is matched
   * in a Changeset of its own, so that one refused changes nothing, then absorbed into its transaction's).
   */
  absorb(other: Changeset): void {
    const offset = this.trades.length;
    this.trades.push(...other.trades);
    for (const move of other.ledger) {
      const reference = 'trade' in move.reference ? { trade: move.reference.trade + offset, role: move.reference.role } : move.reference;
      this.ledger.push({ ...move, reference });
    }
    for (const [accountId, delta] of other.balances) {
      const mine = this.balances.get(accountId);
      if (mine) {
        mine.cash += delta.cash;
        mine.reserved += delta.reserved;
      } else this.balances.set(accountId, { ...delta });
    }
    for (const delta of other.positions.values()) {
      const mine = this.#position(delta.accountId, delta.marketId, delta.side);
      mine.shares += delta.shares;
      mine.reserved += delta.reserved;
    }
    for (const [marketId, effect] of other.markets) {
      const mine = this.market(marketId);
      mine.volume += effect.volume;
      mine.liquidity += effect.liquidity;
      mine.openInterest += effect.openInterest;
      if (effect.lastYesPrice !== undefined) mine.lastYesPrice = effect.lastYesPrice;
    }
    for (const [orderId, lots] of other.makerFills) this.makerFills.set(orderId, (this.makerFills.get(orderId) ?? 0n) + lots);
    this.cancels.push(...other.cancels);
    this.decreases.push(...other.decreases);
  }

  /** Pays a resolved market's payout (micro-Dots) into cash. */
  pay(accountId: string, marketId: string, micro: bigint, settlementId: string): void {
    if (micro === 0n) return;
    this.#move(accountId, marketId, 'settlement', micro, 0n, { settlement: settlementId });
  }

  /** Removes held shares (settlement). */
  removeShares(accountId: string, marketId: string, side: Outcome, lots: bigint): void {
    this.#position(accountId, marketId, side).shares -= lots;
  }

  #move(accountId: string, marketId: string, kind: LedgerMove['kind'], amount: bigint, reservedChange: bigint, reference: LedgerReference): void {
    this.ledger.push({ accountId, marketId, kind, amount, reservedChange, reference });
    let delta = this.balances.get(accountId);
    if (!delta) {
      delta = { cash: 0n, reserved: 0n };
      this.balances.set(accountId, delta);
    }
    delta.cash += amount - reservedChange;
    delta.reserved += reservedChange;
  }

  #position(accountId: string, marketId: string, side: Outcome): PositionDelta {
    const key = `${accountId}|${marketId}|${side}`;
    let delta = this.positions.get(key);
    if (!delta) {
      delta = { accountId, marketId, side, shares: 0n, reserved: 0n };
      this.positions.set(key, delta);
    }
    return delta;
  }
}

function openInterestChange(kind: TradeKind, lots: bigint): bigint {
  if (kind === 'mint') return lots;
  if (kind === 'merge') return -lots;
  return 0n;
}

/** Micro-Dots a resolved market pays for `lots` shares of `side`: 1 Dot each to the winner, 0.50 each on invalid. */
export function payoutMicroDots(result: MarketResult, side: Outcome, lots: bigint): bigint {
  const ticks = result === 'invalid' ? TICKS_PER_DOT / 2 : result === side ? TICKS_PER_DOT : 0;
  return notionalMicroDots(ticks, lots);
}
