import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import { amountsOf, checkSignedOrder, timeInForceOf, type ClientSignedOrder } from './signed-order.js';

const key = `0x${'11'.repeat(32)}` as const;
const account = privateKeyToAccount(key);
const other = privateKeyToAccount(`0x${'22'.repeat(32)}`);

/** Signs as the order-book client does (its order-utils): the CTF exchange's domain on Polygon. */
async function signed(overrides: Partial<ClientSignedOrder> = {}, options: { negRisk?: boolean; chainId?: number; by?: typeof account } = {}): Promise<ClientSignedOrder> {
  const order = {
    salt: 12345,
    maker: account.address,
    signer: account.address,
    taker: '0x0000000000000000000000000000000000000000',
    tokenId: '987654321',
    makerAmount: '4500000',
    takerAmount: '10000000',
    expiration: '0',
    nonce: '0',
    feeRateBps: '0',
    side: 'BUY' as const,
    signatureType: 0,
    ...overrides,
  };
  const exchange = options.negRisk ? '0xC5d563A36AE78145C45a50134d48A1215220f80a' : options.chainId === 80002 ? '0xdFE02Eb6733538f8Ea35D585af8DE5958AD99E40' : '0x4bFb41d5B3570DeFd03C39a9A4D8dE6Bd8B8982E';
  // viem signs from its own copy of the order struct, written out here on purpose: the service's hashing
  // (eip712.ts) is checked against an independent implementation, not against itself.
  const signature = await (options.by ?? account).signTypedData({
    domain: { name: 'Polymarket CTF Exchange', version: '1', chainId: options.chainId ?? 137, verifyingContract: exchange },
    types: {
      Order: [
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
      ],
    },
    primaryType: 'Order',
    message: {
      ...order,
      maker: order.maker as `0x${string}`,
      signer: order.signer as `0x${string}`,
      taker: order.taker as `0x${string}`,
      salt: BigInt(order.salt),
      tokenId: BigInt(order.tokenId),
      makerAmount: BigInt(order.makerAmount),
      takerAmount: BigInt(order.takerAmount),
      expiration: BigInt(order.expiration),
      nonce: BigInt(order.nonce),
      feeRateBps: BigInt(order.feeRateBps),
      side: order.side === 'BUY' ? 0 : 1,
    },
  });
  return { ...order, signature };
}

const bound = [account.address.toLowerCase()];

/** The error checkSignedOrder refuses these arguments with (a 400). */
function refusal(...args: Parameters<typeof checkSignedOrder>): DomainError {
  let error: unknown;
  try {
    checkSignedOrder(...args);
  } catch (thrown) {
    error = thrown;
  }
  expect(error).toBeInstanceOf(DomainError);
  expect((error as DomainError).code).toBe('invalid_request');
  return error as DomainError;
}

describe('amountsOf', () => {
  it('reads price and size from the amounts (6 decimals): a BUY gives collateral, a SELL gives shares', () => {
    expect(amountsOf('BUY', 4_500_000n, 10_000_000n)).toEqual({ ticks: 45, lots: 100_000n });
    expect(amountsOf('SELL', 10_000_000n, 4_500_000n)).toEqual({ ticks: 45, lots: 100_000n });
    expect(amountsOf('BUY', 5_000n, 500_000n)).toEqual({ ticks: 1, lots: 5_000n });
    expect(amountsOf('SELL', 100n, 99n)).toEqual({ ticks: 99, lots: 1n });
  });

  it('refuses a size off the 0.0001 lot, a price off the 0.01 tick or outside 0.01..0.99', () => {
    expect(() => amountsOf('BUY', 450n, 1_050n)).toThrow(/multiple of 0.0001/);
    expect(() => amountsOf('BUY', 0n, 0n)).toThrow(/multiple of 0.0001/);
    expect(() => amountsOf('BUY', 4_550_000n, 10_000_000n)).toThrow(/0.01 tick/);
    expect(() => amountsOf('BUY', 10_000_000n, 10_000_000n)).toThrow(/0.01 tick/);
    expect(() => amountsOf('SELL', 10_000_000n, 0n)).toThrow(/0.01 tick/);
  });
});

describe('timeInForceOf', () => {
  it('maps GTC and GTD to GTC, FOK to FOK and FAK to IOC; post-only only for GTC and GTD', () => {
    expect(timeInForceOf('GTC', true, 0n)).toEqual({ timeInForce: 'GTC', postOnly: true });
    expect(timeInForceOf('GTD', false, 1_900_000_000n)).toEqual({ timeInForce: 'GTC', postOnly: false });
    expect(timeInForceOf('FOK', false, 0n)).toEqual({ timeInForce: 'FOK', postOnly: false });
    expect(timeInForceOf('FAK', false, 0n)).toEqual({ timeInForce: 'IOC', postOnly: false });
    expect(() => timeInForceOf('FAK', true, 0n)).toThrow(/postOnly/);
    expect(() => timeInForceOf('GTD', false, 0n)).toThrow(/expiration/);
    expect(() => timeInForceOf('IOC', false, 0n)).toThrow(/orderType/);
  });
});

describe('checkSignedOrder', () => {
  it('accepts the client\'s EIP-712 signature by the bound signer, on either chain, and keeps what it was signed with', async () => {
    const checked = checkSignedOrder(await signed(), 'GTC', false, false, bound);
    expect(checked).toMatchObject({ tokenId: '987654321', action: 'buy', amounts: { ticks: 45, lots: 100_000n }, timeInForce: 'GTC', postOnly: false, expiration: 0n });
    expect(checked.signed).toMatchObject({ makerAddress: account.address.toLowerCase(), salt: '12345', nonce: '0' });
    expect(checked.signed.orderHash).toMatch(/^0x[0-9a-f]{64}$/);
    const amoy = checkSignedOrder(await signed({}, { chainId: 80002 }), 'GTC', false, false, bound);
    expect(amoy.signed.orderHash).not.toBe(checked.signed.orderHash);
    const sell = checkSignedOrder(await signed({ side: 'SELL', makerAmount: '10000000', takerAmount: '4500000', salt: '7', expiration: '1900000000' }), 'GTD', false, false, bound);
    expect(sell).toMatchObject({ action: 'sell', amounts: { ticks: 45, lots: 100_000n }, expiration: 1_900_000_000n });
  });

  it('checks the signature under the exchange of the market: the neg-risk one for a neg-risk market', async () => {
    const negRisk = await signed({}, { negRisk: true });
    expect(checkSignedOrder(negRisk, 'GTC', false, true, bound)).toMatchObject({ action: 'buy' });
    refusal(negRisk, 'GTC', false, false, bound);
    refusal(await signed(), 'GTC', false, true, bound);
  });

  it('refuses another key\'s signature, a signer not bound, a fee, a changed field, a non-EOA signature, a private order', async () => {
    expect(refusal(await signed({}, { by: other }), 'GTC', false, false, bound).message).toMatch(/signature/);
    const stranger = await signed({ maker: other.address, signer: other.address }, { by: other });
    expect(refusal(stranger, 'GTC', false, false, bound).message).toMatch(/bound/);
    expect(refusal(await signed({ feeRateBps: '100' }), 'GTC', false, false, bound).message).toMatch(/feeRateBps must be 0/);
    const changed = { ...(await signed()), makerAmount: '4600000' };
    expect(refusal(changed, 'GTC', false, false, bound).message).toMatch(/signature/);
    expect(refusal(await signed({ signatureType: 1 }), 'GTC', false, false, bound).message).toMatch(/signatureType/);
    expect(refusal(await signed({ taker: other.address }), 'GTC', false, false, bound).message).toMatch(/taker/);
    expect(refusal(await signed({ maker: other.address }), 'GTC', false, false, bound).message).toMatch(/maker must be the signer/);
    expect(refusal(await signed({ makerAmount: '4550000' }), 'GTC', false, false, bound).message).toMatch(/tick/);
  });
});
