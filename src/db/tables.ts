/**
 * One row type per table, as pg returns its rows: numeric and bigint columns as strings (never JavaScript
 * numbers), timestamps as Dates. A `...Row` type is a whole row of the table it is named after, and is
 * defined here and nowhere else; what a query returns is built from these (`Pick<>`, joins adding a few
 * columns of other tables) and named for what it is, in its repository. The literal unions the columns
 * hold (an outcome, an order's status, ...) are defined here too, once for the whole service.
 *
 * Each table written in bulk also has its inserted columns here, with their PostgreSQL types, one list beside
 * its row type: the repositories build their INSERT column lists and the write statement's parameters (an
 * array per column, bound by name) from it, and the New... types are picked from the row type by it. A new
 * column is added here (to the row type, and to the list when the service sets it on insert) and nowhere else
 * in src/db: the write statement and the reads take every column by name.
 */

/** The PostgreSQL type of a column the service writes in bulk. */
export type SqlType = 'uuid' | 'bigint' | 'int' | 'numeric' | 'text' | 'boolean' | 'timestamptz';

/** Some columns of a row type, each with its PostgreSQL type. */
export type ColumnTypes<Row> = Partial<Record<keyof Row, SqlType>>;

/** A market's two outcomes: the side of an order, a position or a trade's taker. */
export type Outcome = 'yes' | 'no';
/** How a market resolved: an outcome, or `invalid` (each share paid half). */
export type MarketResult = Outcome | 'invalid';
export type Action = 'buy' | 'sell';
export type OrderStatus = 'OPEN' | 'PARTIAL' | 'FILLED' | 'CANCELLED';
export type TimeInForce = 'GTC' | 'IOC' | 'FOK';
/** The side of the YES-frame book an order rests on. */
export type BookSide = 'bid' | 'ask';
export type FillRole = 'maker' | 'taker';
/**
 * How a trade's shares changed hands. transfer_yes: a buyer of YES meets a seller of YES; transfer_no likewise
 * for NO. mint: a YES buyer meets a NO buyer; a new YES+NO pair is created, the buyers pay yesPrice and
 * 100 - yesPrice ticks per lot (1 Dot per contract in total). merge: a YES seller meets a NO seller; a pair is
 * destroyed, the sellers receive yesPrice and 100 - yesPrice ticks per lot.
 */
export type TradeKind = 'transfer_yes' | 'transfer_no' | 'mint' | 'merge';
export type CatalogueStatus = 'ACTIVE' | 'CLOSED' | 'RESOLVED';
/** What the searches find. */
export type SearchKind = 'series' | 'event' | 'market' | 'tag' | 'profile';
export type Role = 'USER' | 'ADMIN';

// --- accounts

/** `users`. */
export interface UsersRow {
  id: string;
  email: string;
  username: string;
  name: string;
  /** Null: an account signed in through a provider, with no password. */
  password_hash: string | null;
  role: Role;
  avatar_url: string | null;
  created_at: Date;
  updated_at: Date;
}

export type ApiKeyKind = 'rsa' | 'hmac';
export type ApiKeyScope = 'read' | 'trade';

/** `api_keys`. */
export interface ApiKeysRow {
  id: string;
  user_id: string;
  name: string;
  kind: ApiKeyKind;
  scopes: ApiKeyScope[];
  public_key: string | null;
  address: string | null;
  passphrase_hash: Buffer | null;
  secret_sealed: Buffer | null;
  created_at: Date;
  last_used_at: Date | null;
}

// --- catalogue

/** `tags`. */
export interface TagsRow {
  id: string;
  slug: string;
  label: string;
  force_show: boolean;
  force_hide: boolean;
  is_carousel: boolean;
  created_by: number | null;
  updated_by: number | null;
  published_at: Date;
  created_at: Date;
  updated_at: Date;
}

/** `categories`. */
export interface CategoriesRow {
  id: string;
  slug: string;
  name: string;
}

/** `series`. */
export interface SeriesRow {
  id: string;
  ticker: string;
  slug: string;
  title: string;
  category_id: string;
  frequency: string;
  series_type: string;
  description: string;
  created_at: Date;
  updated_at: Date;
}

/** `events`. */
export interface EventsRow {
  id: string;
  ticker: string;
  slug: string;
  series_id: string;
  title: string;
  description: string;
  mutually_exclusive: boolean;
  status: CatalogueStatus;
  creator_id: string | null;
  start_date: Date;
  strike_date: Date;
  closed_time: Date | null;
  volume: string;
  liquidity: string;
  open_interest: string;
  created_at: Date;
  updated_at: Date;
}

/** `markets`. */
export interface MarketsRow {
  id: string;
  ticker: string;
  event_id: string;
  title: string;
  status: CatalogueStatus;
  result: MarketResult | null;
  last_yes_price: string | null;
  last_no_price: string | null;
  volume: string;
  liquidity: string;
  open_interest: string;
  rewards_min_size: string | null;
  rewards_max_spread: string | null;
  /** Order-book identifiers (migration 0031): 0x and 64 hex digits; decimal uint256 text. */
  condition_id: string;
  yes_token_id: string;
  no_token_id: string;
  closed_at: Date | null;
  resolved_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

// --- trading

/** `orders`. book_side and yes_price are generated from side, action and price. */
export interface OrdersRow {
  id: string;
  account_id: string;
  market_id: string;
  side: Outcome;
  action: Action;
  price: string;
  count: string;
  remaining: string;
  filled: string;
  cancelled: string;
  status: OrderStatus;
  time_in_force: TimeInForce;
  post_only: boolean;
  reduce_only: boolean;
  client_order_id: string;
  builder_code: string;
  expiration_ts: Date | null;
  sequence: string;
  cancel_reason: string | null;
  /** An order-book client's signed order (migration 0031): its EIP-712 hash, maker, salt, nonce and signature; null otherwise. */
  order_hash: string | null;
  maker_address: string | null;
  salt: string | null;
  nonce: string | null;
  signature: string | null;
  book_side: BookSide;
  yes_price: string;
  created_at: Date;
  updated_at: Date;
}

/** The orders that rest in the book (a condition on `orders`). */
/** The columns an order-book client's signed order adds to its order (null on every other order). */
export type SignedOrderColumn = 'order_hash' | 'maker_address' | 'salt' | 'nonce' | 'signature';

export const LIVE = `status in ('OPEN', 'PARTIAL')`;

export const ORDERS_INSERTED = {
  id: 'uuid', account_id: 'uuid', market_id: 'bigint', side: 'text', action: 'text', price: 'numeric', count: 'numeric', remaining: 'numeric',
  filled: 'numeric', cancelled: 'numeric', status: 'text', time_in_force: 'text', post_only: 'boolean', reduce_only: 'boolean',
  client_order_id: 'text', builder_code: 'text', expiration_ts: 'timestamptz', sequence: 'bigint', cancel_reason: 'text',
  order_hash: 'text', maker_address: 'text', salt: 'numeric', nonce: 'numeric', signature: 'text',
} as const satisfies ColumnTypes<OrdersRow>;

export type NewOrder = Pick<OrdersRow, keyof typeof ORDERS_INSERTED>;

/** `trades`: one per match; kind says how the shares changed hands. */
export interface TradesRow {
  id: string;
  market_id: string;
  yes_price: string;
  count: string;
  taker_side: Outcome;
  maker_order_id: string;
  taker_order_id: string;
  kind: TradeKind;
  created_at: Date;
}

export const TRADES_INSERTED = {
  market_id: 'bigint', yes_price: 'numeric', count: 'numeric', taker_side: 'text', maker_order_id: 'uuid', taker_order_id: 'uuid', kind: 'text',
} as const satisfies ColumnTypes<TradesRow>;

export type NewTrade = Pick<TradesRow, keyof typeof TRADES_INSERTED>;

/** `fills`: each trade's two sides, one per order. */
export interface FillsRow {
  id: string;
  trade_id: string;
  order_id: string;
  account_id: string;
  market_id: string;
  side: Outcome;
  action: Action;
  price: string;
  count: string;
  role: FillRole;
  created_at: Date;
}

export const FILLS_INSERTED = {
  trade_id: 'bigint', order_id: 'uuid', account_id: 'uuid', market_id: 'bigint', side: 'text', action: 'text', price: 'numeric', count: 'numeric', role: 'text',
} as const satisfies ColumnTypes<FillsRow>;

export type NewFill = Pick<FillsRow, keyof typeof FILLS_INSERTED>;

/** `positions`: an account's shares of one outcome of a market; `reserved` of them are offered by its live sell orders. */
export interface PositionsRow {
  id: string;
  account_id: string;
  market_id: string;
  side: Outcome;
  shares: string;
  reserved: string;
  created_at: Date;
  updated_at: Date;
}

export const POSITIONS_INSERTED = { account_id: 'uuid', market_id: 'bigint', side: 'text', shares: 'numeric', reserved: 'numeric' } as const satisfies ColumnTypes<PositionsRow>;

/** `balances`: an account's cash; `reserved` of it backs its live buy orders. */
export interface BalancesRow {
  user_id: string;
  cash: string;
  reserved: string;
}

/** `ledger_entries`: every change of a balance (sum(amount) = cash + reserved, sum(reserved_change) = reserved). */
export interface LedgerEntriesRow {
  id: string;
  user_id: string;
  amount: string;
  reserved_change: string;
  kind: string;
  reference: string | null;
  market_id: string | null;
  created_at: Date;
}

export const LEDGER_ENTRIES_INSERTED = {
  user_id: 'uuid', amount: 'numeric', reserved_change: 'numeric', kind: 'text', reference: 'text', market_id: 'bigint',
} as const satisfies ColumnTypes<LedgerEntriesRow>;

export type NewLedgerEntry = Pick<LedgerEntriesRow, keyof typeof LEDGER_ENTRIES_INSERTED>;

/** `settlements`: what a resolution paid an account for its shares of a market. */
export interface SettlementsRow {
  id: string;
  account_id: string;
  market_id: string;
  result: MarketResult;
  yes_count: string;
  no_count: string;
  payout: string;
  created_at: Date;
}

export const SETTLEMENTS_INSERTED = {
  account_id: 'uuid', market_id: 'bigint', result: 'text', yes_count: 'numeric', no_count: 'numeric', payout: 'numeric',
} as const satisfies ColumnTypes<SettlementsRow>;

export type NewSettlement = Pick<SettlementsRow, keyof typeof SETTLEMENTS_INSERTED>;

// --- order sessions and the real-time feed

/** `order_sessions`: a maker's heartbeat; when it lapses, the account's live orders are cancelled. */
export interface OrderSessionsRow {
  id: string;
  account_id: string;
  timeout_seconds: number;
  last_seen_at: Date;
  expires_at: Date;
  cancelled_at: Date | null;
  cancelled_count: number;
  created_at: Date;
}

export type NewOrderSession = Pick<OrderSessionsRow, 'id' | 'account_id' | 'timeout_seconds' | 'last_seen_at' | 'expires_at'>;

/** `feed_events`: the real-time feed's outbox, one record per market per trading transaction. */
export interface FeedEventsRow<Events = unknown> {
  market_id: string;
  seq: string;
  ticker: string;
  /** What the service stored, as it stored it. */
  events: Events;
  created_at: Date;
}

/** `feed_sequences`: per market, the sequence number of its latest feed record. */
export interface FeedSequencesRow {
  market_id: string;
  seq: string;
}

/**
 * References that no foreign key holds: trades, fills and ledger entries are records written with the rows they
 * name and never changed, so the database does not check them on every write (migration 0029). A restore
 * checks them once over the loaded rows (backup.ts), as it checks the foreign keys.
 */
export const UNKEYED_REFERENCES: ReadonlyArray<{ table: string; column: string; references: string }> = [
  { table: 'trades', column: 'market_id', references: 'markets' },
  { table: 'trades', column: 'maker_order_id', references: 'orders' },
  { table: 'trades', column: 'taker_order_id', references: 'orders' },
  { table: 'fills', column: 'trade_id', references: 'trades' },
  { table: 'fills', column: 'order_id', references: 'orders' },
  { table: 'fills', column: 'account_id', references: 'users' },
  { table: 'fills', column: 'market_id', references: 'markets' },
  { table: 'ledger_entries', column: 'user_id', references: 'users' },
  { table: 'ledger_entries', column: 'market_id', references: 'markets' },
];

/** An INSERT's column list, each column prefixed by `alias.` or replaced by an expression of `as`. */
export function columnList(columns: Readonly<Record<string, SqlType>>, alias?: string, as: Readonly<Record<string, string>> = {}): string {
  return Object.keys(columns)
    .map((c) => as[c] ?? (alias ? `${alias}.${c}` : c))
    .join(', ');
}
