import { invalid } from '../errors.js';
import { recoverSigner, toHex, typedDataDigest, type Eip712Field } from './eip712.js';
import type { TimeInForce } from '../../db/tables.js';
import { LOTS_PER_CONTRACT, MAX_PRICE_TICKS, MIN_PRICE_TICKS, TICKS_PER_DOT } from '../trading/money.js';

/**
 * The order-book (CLOB) client's signed order, as `postOrder` sends it, read into this exchange's terms
 * (pure: no I/O). The client signs the order with EIP-712 under the CTF exchange's domain; the service checks
 * that signature, and the amounts, against its own rules.
 */

/** The order as the client sends it (`{order, owner, orderType, deferExec, postOnly?}`'s `order`). */
export interface ClientSignedOrder {
  salt: number | string;
  maker: string;
  signer: string;
  taker: string;
  tokenId: string;
  makerAmount: string;
  takerAmount: string;
  expiration: string;
  nonce: string;
  feeRateBps: string;
  side: 'BUY' | 'SELL';
  signatureType: number;
  signature: string;
}

/**
 * The EIP-712 domains the client signs under (its config.js and order-utils): name and version of the CTF
 * exchange, the chain (Polygon 137 or Amoy 80002) and, as verifying contract, the exchange of that chain,
 * or the neg-risk exchange for a market whose event is mutually exclusive.
 */
const PROTOCOL = { name: 'Polymarket CTF Exchange', version: '1' } as const;
const CHAINS = [
  { chainId: 137, exchange: '0x4bFb41d5B3570DeFd03C39a9A4D8dE6Bd8B8982E', negRiskExchange: '0xC5d563A36AE78145C45a50134d48A1215220f80a' },
  { chainId: 80002, exchange: '0xdFE02Eb6733538f8Ea35D585af8DE5958AD99E40', negRiskExchange: '0xC5d563A36AE78145C45a50134d48A1215220f80a' },
] as const;
const ORDER_FIELDS: readonly Eip712Field[] = [
  { name: 'salt', type: 'uint256' },
  { name: 'maker', type: 'address' },
  { name: 'signer', type: 'address' },
  { name: 'taker', type: 'address' },
  { name: 'tokenId', type: 'uint256' },
  { name: 'makerAmount', type: 'uint256' },
  { name: 'takerAmount', type: 'uint256' },
  { name: 'expiration', type: 'uint256' },
  { name: 'nonce', type: 'uint256' },
  { name: 'feeRateBps', type: 'uint256' },
  { name: 'side', type: 'uint8' },
  { name: 'signatureType', type: 'uint8' },
];

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';
/** Amounts carry 6 decimals (the collateral's and the outcome tokens'). */
const AMOUNT_UNITS_PER_CONTRACT = 1_000_000n;
const UNITS_PER_LOT = AMOUNT_UNITS_PER_CONTRACT / LOTS_PER_CONTRACT;
const UINT = /^\d{1,78}$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const MAX_UINT256 = (1n << 256n) - 1n;

const field = (path: string, message: string) => invalid(message, [{ location: 'body', path, message }]);

/** A uint256 written in decimal (a JSON number too, when it is a safe integer). */
function uint(value: unknown, path: string): bigint {
  const text = typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? String(value) : value;
  if (typeof text !== 'string' || !UINT.test(text) || BigInt(text) > MAX_UINT256) throw field(path, `${path} must be a non-negative integer (uint256) in decimal`);
  return BigInt(text);
}

/** Price and size of an order, from its amounts: ticks of 0.01 in the token's own frame, and lots of 0.0001. */
export interface OrderAmounts {
  ticks: number;
  lots: bigint;
}

/**
 * BUY gives `makerAmount` of collateral for `takerAmount` of the token, SELL the reverse; both with 6
 * decimals. The size must be a whole number of lots (0.0001), and the price (collateral / size) exactly on
 * the 0.01 tick, from 0.01 to 0.99.
 */
export function amountsOf(side: 'BUY' | 'SELL', makerAmount: bigint, takerAmount: bigint): OrderAmounts {
  const [collateral, shares] = side === 'BUY' ? [makerAmount, takerAmount] : [takerAmount, makerAmount];
  const sharesPath = side === 'BUY' ? 'order.takerAmount' : 'order.makerAmount';
  if (shares === 0n || shares % UNITS_PER_LOT !== 0n) throw field(sharesPath, `the order's size (${sharesPath}, 6 decimals) must be a positive multiple of 0.0001`);
  const hundredths = collateral * BigInt(TICKS_PER_DOT);
  const ticks = hundredths / shares;
  if (hundredths % shares !== 0n || ticks < MIN_PRICE_TICKS || ticks > MAX_PRICE_TICKS) {
    throw field('order', 'the price (makerAmount / takerAmount for a BUY, takerAmount / makerAmount for a SELL) must be on the 0.01 tick, from 0.01 to 0.99');
  }
  return { ticks: Number(ticks), lots: shares / UNITS_PER_LOT };
}

/** How the client's order types and `postOnly` map onto the engine's time in force and post-only rule. */
export function timeInForceOf(orderType: unknown, postOnly: boolean, expiration: bigint): { timeInForce: TimeInForce; postOnly: boolean } {
  if (orderType !== 'GTC' && orderType !== 'GTD' && orderType !== 'FOK' && orderType !== 'FAK') {
    throw field('orderType', `orderType must be GTC, GTD, FOK or FAK, got ${JSON.stringify(String(orderType).slice(0, 24))}`);
  }
  if (postOnly && orderType !== 'GTC' && orderType !== 'GTD') throw field('postOnly', 'postOnly is only for GTC and GTD orders');
  if (orderType === 'GTD' && expiration === 0n) throw field('order.expiration', 'a GTD order needs an expiration (Unix seconds)');
  if (orderType === 'GTC' || orderType === 'GTD') return { timeInForce: 'GTC', postOnly };
  return { timeInForce: orderType === 'FOK' ? 'FOK' : 'IOC', postOnly: false };
}

/** What the order was signed with, kept on the order placed. */
export interface SignedRecord {
  orderHash: string;
  makerAddress: string;
  salt: string;
  nonce: string;
  signature: string;
}

/** A signed order checked: which token, what it does, and what it was signed with. */
export interface CheckedSignedOrder {
  tokenId: string;
  action: 'buy' | 'sell';
  amounts: OrderAmounts;
  timeInForce: TimeInForce;
  postOnly: boolean;
  /** Unix seconds; 0 for none. */
  expiration: bigint;
  signed: SignedRecord;
}

/**
 * Checks a signed order's fields, then its signature: an EOA's (signature type 0), by `signer`, who must
 * also be `maker` and one of `addresses` (those the caller's order-book credentials are bound to; lower
 * case), under the domain of the market's exchange (`negRisk`) on either chain. Every refusal is a 400.
 */
export function checkSignedOrder(
  order: ClientSignedOrder,
  orderType: unknown,
  postOnly: boolean,
  negRisk: boolean,
  addresses: readonly string[],
): CheckedSignedOrder {
  if (order.signatureType !== 0) throw field('order.signatureType', 'only EOA signatures (signatureType 0) are accepted');
  for (const name of ['maker', 'signer', 'taker'] as const) {
    if (typeof order[name] !== 'string' || !ADDRESS.test(order[name])) throw field(`order.${name}`, `order.${name} must be an address (0x and 40 hex digits)`);
  }
  if (order.maker.toLowerCase() !== order.signer.toLowerCase()) throw field('order.maker', 'maker must be the signer (an EOA signs for itself)');
  if (order.taker.toLowerCase() !== ZERO_ADDRESS) throw field('order.taker', 'taker must be the zero address: orders are public');
  if (!addresses.includes(order.signer.toLowerCase())) throw field('order.signer', 'signer must be the address the API key is bound to');
  const fee = uint(order.feeRateBps, 'order.feeRateBps');
  if (fee !== 0n) throw field('order.feeRateBps', `feeRateBps must be 0: the exchange is fee-free, got ${fee}`);
  const side = order.side === 'BUY' ? 0 : order.side === 'SELL' ? 1 : undefined;
  if (side === undefined) throw field('order.side', 'side must be BUY or SELL');
  const message = {
    salt: uint(order.salt, 'order.salt'),
    maker: order.maker,
    signer: order.signer,
    taker: order.taker,
    tokenId: uint(order.tokenId, 'order.tokenId'),
    makerAmount: uint(order.makerAmount, 'order.makerAmount'),
    takerAmount: uint(order.takerAmount, 'order.takerAmount'),
    expiration: uint(order.expiration, 'order.expiration'),
    nonce: uint(order.nonce, 'order.nonce'),
    feeRateBps: fee,
    side,
    signatureType: 0,
  };
  const amounts = amountsOf(order.side, message.makerAmount, message.takerAmount);
  const terms = timeInForceOf(orderType, postOnly, message.expiration);
  if (typeof order.signature !== 'string' || !/^0x[0-9a-fA-F]{130}$/.test(order.signature)) throw field('order.signature', 'signature must be 0x and 130 hex digits');
  for (const chain of CHAINS) {
    const domain = { ...PROTOCOL, chainId: chain.chainId, verifyingContract: negRisk ? chain.negRiskExchange : chain.exchange };
    const digest = typedDataDigest(domain, 'Order', ORDER_FIELDS, message);
    if (recoverSigner(digest, order.signature) === order.signer.toLowerCase()) {
      return {
        tokenId: message.tokenId.toString(),
        action: order.side === 'BUY' ? 'buy' : 'sell',
        amounts,
        ...terms,
        expiration: message.expiration,
        signed: {
          orderHash: toHex(digest),
          makerAddress: order.maker.toLowerCase(),
          salt: message.salt.toString(),
          nonce: message.nonce.toString(),
          signature: order.signature.toLowerCase(),
        },
      };
    }
  }
  throw field('order.signature', "the signature is not the signer's over this order (EIP-712, the CTF exchange's domain on Polygon or Amoy)");
}
