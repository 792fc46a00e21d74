import { performance } from 'node:perf_hooks';
import type { NewOrder } from '../../../db/tables.js';
import { conflict, DomainError, invalid } from '../../errors.js';
import { Batcher, type BatchResult } from '../batcher.js';
import { parsePlacement } from '../input.js';
import { placementRead, planPlacements, type PlacementRequest } from '../placement.js';
import type { InsertedOrder, TradingTransactions } from '../transaction.js';
import type { PlaceOrderInput, PlacementOutcome } from '../types.js';
import { orderView, type OrderView } from '../views.js';

/** The fields of an order row that later placements of its batch may change. */
const stateOnceMade = (row: NewOrder) => ({
  remaining: row.remaining,
  filled: row.filled,
  cancelled: row.cancelled,
  status: row.status,
  cancel_reason: row.cancel_reason,
});

const UNIQUE_VIOLATION = '23505';
const CLIENT_ORDER_ID_INDEX = 'orders_account_client_order_id_unique';
const ORDER_HASH_INDEX = 'orders_order_hash_unique';
/**
 * Placements made in one transaction at most; a batch placement (placeMany) always fits whole, and five of
 * 20 share one transaction (the COMMIT and the markets' locks are most of a transaction's fixed cost).
 */
const MAX_PLACEMENT_BATCH = 100;
/** Orders one batch placement (placeMany) may carry. */
export const MAX_ORDERS_PER_BATCH = 20;

/**
 * Order placement. Placements that arrive while others are being made wait, and go together in one
 * transaction (group commit): the markets' locks are taken once and the transaction commits once for all
 * of them (placements on one market are serialised by its lock anyway, so under load this is what lets
 * them go faster than one commit at a time). They are matched one after another in memory against what the
 * transaction read at its start (planPlacements), and written in as few statements as possible. A
 * placement refused by a rule gets its error and leaves the others alone. If the transaction fails as a
 * whole while placing (a write refused by the database: say, one client_order_id placed twice by two
 * processes at once), each placement is made again in a transaction of its own, so that an error reaches
 * only the placement it belongs to.
 */
export class OrderPlacement {
  readonly #batcher = new Batcher<PlacementRequest, OrderView>((items) => this.#placeBatch(items), MAX_PLACEMENT_BATCH);

  constructor(private readonly transactions: TradingTransactions) {}

  /** Places an order that arrived at `now` (expiry and the matching of expired orders are judged by it). */
  async place(accountId: string, input: PlaceOrderInput, now: Date): Promise<OrderView> {
    const order = parsePlacement(input, now);
    return this.#batcher.submit({ accountId, order, now });
  }

  /**
   * Orders of one account placed together: each is checked on its own (one that fails its checks gets its
   * error and is not placed), then the others go to the placement batches together, so that they are made
   * in one transaction (with any placements waiting before them) and come to exactly what placing them one
   * after another, in this order, would. Outcomes in the order of `inputs`.
   */
  async placeMany(accountId: string, inputs: readonly PlaceOrderInput[], now: Date): Promise<PlacementOutcome[]> {
    if (inputs.length === 0 || inputs.length > MAX_ORDERS_PER_BATCH) throw invalid(`a batch places 1 to ${MAX_ORDERS_PER_BATCH} orders, got ${inputs.length}`);
    const checked = inputs.map((input): { order: PlacementRequest['order'] } | { error: DomainError } => {
      try {
        return { order: parsePlacement(input, now) };
      } catch (error) {
        if (error instanceof DomainError) return { error };
        throw error;
      }
    });
    const placed = await this.#batcher.submitTogether(checked.flatMap((c) => ('order' in c ? [{ accountId, order: c.order, now }] : [])));
    let next = 0;
    return checked.map((c) => {
      if ('error' in c) return c;
      const outcome = placed[next++]!;
      return 'value' in outcome ? { order: outcome.value } : outcome;
    });
  }

  async #placeBatch(items: PlacementRequest[]): Promise<Array<BatchResult<OrderView>>> {
    if (items.length > 1) {
      // Made again one by one only when the batch failed while placing (so nothing of it committed); a
      // failure after that (the outbox write, the COMMIT itself, whose outcome may be unknown) is every
      // placement's error: placing them again could place them twice.
      let placing = true;
      const placed = await this.#placeTogether(items, () => {
        placing = false;
      }).catch((error: unknown) => {
        if (placing) return undefined;
        throw error;
      });
      if (placed) return placed;
    }
    const outcomes: Array<BatchResult<OrderView>> = [];
    for (const item of items) {
      const [outcome] = await this.#placeTogether([item]).catch((error: { code?: string; constraint?: string }) => {
        // Two placements with one client_order_id racing past the check: the unique index decides.
        if (error.code === UNIQUE_VIOLATION && error.constraint === CLIENT_ORDER_ID_INDEX) {
          return [{ error: conflict(`client_order_id '${item.order.clientOrderId}' is already used by another order of this account`) }];
        }
        // A signed order placed at once by two accounts whose keys are bound to its signer.
        if (error.code === UNIQUE_VIOLATION && error.constraint === ORDER_HASH_INDEX) {
          return [{ error: conflict(`this signed order (hash ${item.order.signed?.orderHash}) was placed before: sign a new one (a new salt)`) }];
        }
        return [{ error }];
      });
      outcomes.push(outcome!);
    }
    return outcomes;
  }

  /** Placements in one transaction; `placed` is called once all their writes are made. */
  async #placeTogether(items: PlacementRequest[], placed?: () => void): Promise<Array<BatchResult<OrderView>>> {
    const started = performance.now();
    const { outcomes, inserted } = await this.transactions.run(async (transaction) => {
      const { reads, balances } = await transaction.beginPlacements(items.map(placementRead));
      const plan = planPlacements(items, reads);
      const inserted = new Map<string, InsertedOrder>();
      for (const write of plan.writes) {
        for (const row of await transaction.persist(write.changes, balances, write)) inserted.set(row.id, row);
        for (const [accountId, delta] of write.changes.balances) {
          const balance = balances.get(accountId)!;
          balances.set(accountId, { cash: balance.cash + delta.cash, reserved: balance.reserved + delta.reserved });
        }
      }
      placed?.();
      return { outcomes: plan.outcomes, inserted };
    });
    this.transactions.activity?.placed(items.length, inserted.size, (performance.now() - started) / 1000);
    // Each placement answers its order as it was once placed: what later placements of the batch did to it
    // (written into its inserted row) is theirs to tell.
    return outcomes.map((o) => ('error' in o ? o : { value: orderView({ ...inserted.get(o.orderId)!, ...stateOnceMade(o.placed), ticker: o.market.ticker }) }));
  }
}
