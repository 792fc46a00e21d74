/**
 * The contract run's fixtures: the accounts, catalogue records and orders the hooks' requests name, made through the
 * integration tests' client (which checks every answer against the document too), each made once when first needed.
 */
import crypto from 'node:crypto';
import { Chain, OrderBuilder, Side } from '@polymarket/clob-client';
import { Wallet } from 'ethers';
import type { OpenAPIV3 } from 'openapi-types';
import type { OperationInfo } from '../codegen/operations.js';
import { ApiClient, type RequestOptions } from '../test/support/service.js';

export type Json = Record<string, unknown>;
export type Account = { email: string; password: string; token: string; id?: string };
/** Set up by beforeAll; `operations` by "<method> <path>" and by operationId. */
export const state = { api: new ApiClient(''), doc: {} as OpenAPIV3.Document, operations: new Map<string, OperationInfo>(), user: {} as Account, admin: {} as Account };
export const examples: Record<string, Json> = {}; // the request body of each operation's first 2xx transaction (what Dredd sends)
const RUN = crypto.randomBytes(3).toString('hex');
let counter = 0;
const suffix = () => `${RUN}${(counter += 1)}`;
const ending = (base: unknown, fallback: string, end: string, max: number) => `${(typeof base === 'string' && base) || fallback}`.slice(0, max - end.length) + end;
/** Identifiers no other run or transaction uses, within the document's patterns and lengths; addresses of 198.18.0.0/15. */
export const unique = {
  email: () => `contract-${suffix()}@example.com`,
  username: () => `c_${suffix()}`,
  ticker: (base: unknown) => ending(base, 'CONTRACT', `-C${suffix().toUpperCase()}`, 64),
  slug: (base: unknown) => ending(base, 'contract', `-c${suffix()}`, 100),
  number: () => (counter += 1),
  address: (n = (counter += 1)) => `198.${18 + ((n >> 16) & 1)}.${(n >> 8) & 255}.${n & 255}`,
};
export const missingTicker = () => `NO-SUCH-${RUN.toUpperCase()}`;
/** `make`'s value, made the first time it is asked for. */
export function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}
export const fillPath = (template: string, params: Record<string, string>) => template.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
export const example = (operationId: string): Json => examples[operationId] ?? fail(`no example body for ${operationId}`);
export function fail(message: string): never { throw new Error(message); }
/** A fixture's request, from an address of its own unless `headers` name one. */
export const request = (method: string, path: string, options: RequestOptions) => state.api.request(method, path, { ...options, headers: { 'x-forwarded-for': unique.address(), ...options.headers } });
/** A fixture's request to an operation of the document, which must answer one of `statuses`. */
export async function send<T = Json>(operationId: string, options: { token?: string; params?: Record<string, string>; body?: unknown }, ...statuses: [number, ...number[]]): Promise<T> {
  const op = state.operations.get(operationId) ?? fail(`no operation '${operationId}' in the document`);
  const response = await request(op.method.toUpperCase(), fillPath(op.path, options.params ?? {}), options);
  if (!statuses.includes(response.status)) fail(`${operationId}: expected ${statuses.join(' or ')}, got ${response.status} ${JSON.stringify(response.body)}`);
  return response.body as T;
}
export async function registerAccount(): Promise<Account> {
  const [email, password] = [unique.email(), crypto.randomBytes(12).toString('hex')];
  return { email, password, token: (await send<{ token: string }>('registerAccount', { body: { email, password, name: 'Contract Tests' } }, 201)).token };
}
/** One RSA key pair for every API key the hooks create (the service keeps only public keys). */
export const keyPair = once(() => crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }));
export const publicPem = () => keyPair().publicKey.export({ type: 'spki', format: 'pem' }).toString();
export const createApiKey = async (account: Account, scopes: string[]) =>
  (await send<{ api_key: { id: string } }>('createApiKey', { token: account.token, body: { name: 'contract', kind: 'rsa', scopes, public_key: publicPem() } }, 201)).api_key;
const scopedKeys: Record<string, Promise<{ id: string }>> = {};
export const scopedKey = (scope: string) => (scopedKeys[scope] ??= createApiKey(state.user, [scope])); // the USER's key with this one scope
/** A fresh account with the 20 API keys allowed. */
export const fullAccount = () => registerAccount().then(async (account) => Promise.all(Array.from({ length: 20 }, () => createApiKey(account, ['read']))).then(() => account));
/** A new ACTIVE market in the example event. */
export async function freshMarket(overrides: Json = {}): Promise<string> {
  const body = { ...example('createAdminMarket'), ticker: unique.ticker(example('createAdminMarket').ticker), ...overrides };
  return (await send<{ market: { ticker: string } }>('createAdminMarket', { token: state.admin.token, body }, 201)).market.ticker;
}
export const closedMarket = () => freshMarket().then((ticker) => send('closeAdminMarket', { token: state.admin.token, params: { ticker } }, 200).then(() => ticker));
/** Places the placeOrder example (a resting buy) with a fresh client_order_id. */
export async function placeExampleOrder(account = state.user, overrides: Json = {}) {
  const body = { ...example('placeOrder'), client_order_id: unique.slug('fixture'), ...overrides };
  return (await send<{ order: { order_id: string; status: string } }>('placeOrder', { token: account.token, body }, 201)).order;
}
export const otherAccount = once(registerAccount); // whose orders are 404 to the contract USER
export const heartbeatAccount = once(registerAccount);
/** The token and body of an expired order session's heartbeat: started by beforeAll, so that it expires while other transactions run. */
export const expiredSession = once(async () => {
  const account = await registerAccount();
  const session = await send<{ expires_at: string; heartbeat_id: string }>('sendHeartbeat', { token: account.token, body: {} }, 200);
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(session.expires_at) - Date.now() + 250)));
  return { token: account.token, body: { heartbeat_id: session.heartbeat_id } };
});
export const buy = (account: Account, ticker: string, side: string, count: string, price: string) => placeExampleOrder(account, { ticker, side, action: 'buy', count, price });
/**
 * Orders for the scoring checks: on a market with maker rewards (minimum 1, spread 0.05) another account rests bids of
 * YES and NO at 0.49 (midpoint 0.50); the contract USER rests YES bids at 0.48 (scoring) and at 0.30 (not).
 */
export const scoringOrders = once(async () => {
  const [ticker, other] = [await freshMarket({ rewards_min_size: '1', rewards_max_spread: '0.05' }), await otherAccount()];
  for (const side of ['yes', 'no']) await buy(other, ticker, side, '5', '0.49');
  return [(await buy(state.user, ticker, 'yes', '5', '0.48')).order_id, (await buy(state.user, ticker, 'yes', '5', '0.30')).order_id];
});
export const scoringIds = async () => [...(await scoringOrders()), crypto.randomUUID()]; // and an unknown id
/**
 * Records for the portfolio and market-data collections: on a fresh market the contract USER buys YES and another
 * account NO at complementary prices (a mint: fills, positions, a trade), and both leave a bid resting; on a second
 * market they trade the same way and the admin resolves it `yes` (settlements).
 */
export const tradingFixture = once(async () => {
  const other = await otherAccount();
  const cross = async (ticker: string) => {
    await buy(state.user, ticker, 'yes', '2', '0.60');
    const taker = await buy(other, ticker, 'no', '2', '0.40');
    return taker.status === 'FILLED' ? ticker : fail(`the fixture orders should have crossed, got ${JSON.stringify(taker)}`);
  };
  const [traded, settled] = [await cross(await freshMarket()), await cross(await freshMarket())];
  await buy(state.user, traded, 'yes', '1', '0.30');
  await buy(other, traded, 'no', '1', '0.50');
  await send('resolveAdminMarket', { token: state.admin.token, params: { ticker: settled }, body: { result: 'yes' } }, 200);
  return { traded, settled };
});
/** The event example's strike date is fixed and may not precede the start (now): a past one moves a year ahead. */
export function keepStrikeDateAhead(body: Json): Json {
  if (typeof body.strike_date === 'string' && Date.parse(body.strike_date) <= Date.now() && !body.start_date) body.strike_date = new Date(Date.now() + 365 * 86_400_000).toISOString();
  return body;
}

/** A market's identifiers, its order-book ones among them, as the native market shows them. */
type MarketIds = { id: string; conditionId: string; yesTokenId: string; noTokenId: string };
const marketIds = async (ticker: string) => (await send<{ market: MarketIds }>('getMarket', { params: { ticker } }, 200)).market;
export const exampleMarket = once(() => marketIds(String(example('createAdminMarket').ticker)));
/** An outcome token id no market has (the real ones are SHA-256 digests). */
export const UNKNOWN_TOKEN = '12345';
/**
 * The order-book client's market data: on a fresh market, two accounts other than the contract USER (whose orders
 * the cancel-all transactions cancel) trade 2 YES at 0.60, then rest a YES bid at 0.30 and a NO bid at 0.50 (a YES
 * ask at 0.50): a book with both sides, and a last trade.
 */
export const clobFixture = once(async () => {
  const [ticker, maker, taker] = [await freshMarket(), await otherAccount(), await registerAccount()];
  await buy(maker, ticker, 'yes', '2', '0.60');
  if ((await buy(taker, ticker, 'no', '2', '0.40')).status !== 'FILLED') fail('the order-book fixture orders should have crossed');
  await buy(maker, ticker, 'yes', '1', '0.30');
  await buy(taker, ticker, 'no', '1', '0.50');
  return { ticker, ...(await marketIds(ticker)) };
});
/** The wallet the contract USER's order-book API key (kind hmac) is bound to: with a Bearer token, it may sign orders. */
const clobWallet = once(async () => {
  const wallet = Wallet.createRandom();
  const body = { name: 'contract order-book', kind: 'hmac', scopes: ['read', 'trade'], address: wallet.address };
  await send('createApiKey', { token: state.user.token, body }, 201);
  return wallet;
});
/**
 * A signed order as the order-book client posts it, by the contract USER's wallet with a fresh salt: a buy of 1 YES of
 * the example market at 0.10, which rests; `tokenId` replaces the token after signing (a token no market has is 404
 * before the signature is checked).
 */
export async function signedOrder(tokenId?: string): Promise<Json> {
  const { conditionId, yesTokenId } = await exampleMarket();
  const { neg_risk: negRisk } = await send<{ neg_risk: boolean }>('getClobMarket', { params: { condition_id: conditionId } }, 200); // the exchange signed for
  const terms = { tokenID: yesTokenId, price: 0.1, size: 1, side: Side.BUY };
  const order = await new OrderBuilder(await clobWallet(), Chain.POLYGON).buildOrder(terms, { tickSize: '0.01', negRisk });
  return { order: { ...order, side: 'BUY', ...(tokenId ? { tokenId } : {}) }, orderType: 'GTC' };
}
