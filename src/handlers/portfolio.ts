import type { Handler } from './types.js';
import { presentBalance, presentFill, presentPosition, presentSettlement } from '../presenters/trading.js';
import { callerId, pageOf } from './trading.js';

/** The caller's Dots and holdings: cursor collections filterable by `ticker`. */

export const getBalance: Handler<'getBalance'> = async ({ account }, { services }) => ({
  status: 200,
  body: presentBalance(await services.trading.getBalance(callerId(account))),
});

export const listPositions: Handler<'listPositions'> = async ({ query, account }, { services }) => {
  const page = await services.trading.listPositions(callerId(account), pageOf(query));
  return { status: 200, body: { cursor: page.cursor, positions: page.positions.map(presentPosition) } };
};

export const listFills: Handler<'listFills'> = async ({ query, account }, { services }) => {
  const page = await services.trading.listFills(callerId(account), pageOf(query));
  return { status: 200, body: { cursor: page.cursor, fills: page.fills.map(presentFill) } };
};

export const listSettlements: Handler<'listSettlements'> = async ({ query, account }, { services }) => {
  const page = await services.trading.listSettlements(callerId(account), pageOf(query));
  return { status: 200, body: { cursor: page.cursor, settlements: page.settlements.map(presentSettlement) } };
};
