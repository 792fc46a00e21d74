import { invalid } from '../domain/errors.js';
import { MAX_SCORING_IDS } from '../domain/sessions/service.js';
import type { Handler } from './types.js';
import { presentHeartbeatAck, presentHeartbeatSession, presentScoringMap, presentScoringStatus } from '../presenters/sessions.js';
import { callerId } from './trading.js';

/**
 * Order sessions and order scoring: the native paths and the paths order-book clients use (clients of
 * CLOB-style order books send heartbeats and ask whether their orders score), each alias served by its
 * implementation here through `x-handler`. The session service does the rest.
 */

/** The heartbeat body is optional: no body, `{}`, or `{heartbeat_id: string | null}`. */
const heartbeatIdOf = (body: { heartbeat_id?: string | null } | undefined): string | null | undefined =>
  body && typeof body === 'object' ? body.heartbeat_id : undefined;

export const sendHeartbeat: Handler<'sendHeartbeat'> = async ({ body, account }, { services }) => ({
  status: 200,
  body: presentHeartbeatSession(await services.sessions.heartbeat(callerId(account), heartbeatIdOf(body))),
});

/** Also serves /heartbeats, /api/heartbeats, /api/clob/heartbeats and /api/clob/v1/heartbeats. */
export const sendClobHeartbeat: Handler<'sendClobHeartbeat'> = async ({ body, account }, { services }) => ({
  status: 200,
  body: presentHeartbeatAck(await services.sessions.heartbeat(callerId(account), heartbeatIdOf(body))),
});

export const getOrderScoringStatus: Handler<'getOrderScoringStatus'> = async ({ account }, { services }) => ({
  status: 200,
  body: presentScoringStatus(await services.sessions.scoringStatus(callerId(account))),
});

const SINGLE_ID_NAMES = ['order_id', 'orderId', 'orderID'] as const;

/** Also serves GET /api/order-scoring and GET /order-scoring. */
export const checkOrderScoring: Handler<'checkOrderScoring'> = async ({ query, account }, { services }) => {
  const given = SINGLE_ID_NAMES.filter((name) => query[name] !== undefined);
  if (given.length !== 1) {
    throw invalid(`exactly one of order_id, orderId and orderID is required, got ${given.length === 0 ? 'none' : given.join(' and ')}`, [
      { location: 'query', path: 'order_id', message: given.length === 0 ? 'missing' : 'given more than once' },
    ]);
  }
  const id = query[given[0]!]!;
  const scoring = await services.sessions.ordersScoring(callerId(account), [id]);
  return { status: 200, body: { scoring: scoring.get(id) ?? false } };
};

/**
 * Also serves GET /orders-scoring and GET /api/orders-scoring. The ids are read again from the raw query
 * string: Koa's parser keeps at most 1,000 parameters (a 1,001st repeated id would vanish instead of being
 * refused), and a value of a repeated parameter may itself be comma-separated.
 */
export const checkOrdersScoring: Handler<'checkOrdersScoring'> = async ({ account }, { services, koa }) => {
  const ids = new URLSearchParams(koa.querystring).getAll('order_ids').flatMap((value) => value.split(','));
  if (ids.length === 0 || ids.some((id) => id === '' || id.length > 128)) {
    throw invalid('order_ids must name 1 to 1000 order ids of 1 to 128 characters', [{ location: 'query', path: 'order_ids', message: 'empty or too long id' }]);
  }
  if (ids.length > MAX_SCORING_IDS) {
    throw invalid(`at most ${MAX_SCORING_IDS} order ids per request, got ${ids.length}`, [{ location: 'query', path: 'order_ids', message: `more than ${MAX_SCORING_IDS} ids` }]);
  }
  return { status: 200, body: presentScoringMap(await services.sessions.ordersScoring(callerId(account), ids)) };
};

/** Also serves POST /orders-scoring and POST /api/orders-scoring: a bare JSON array of ids. */
export const checkOrdersScoringList: Handler<'checkOrdersScoringList'> = async ({ body, account }, { services }) => ({
  status: 200,
  body: presentScoringMap(await services.sessions.ordersScoring(callerId(account), body)),
});

/** Also serves POST /api/order-scoring and POST /order-scoring: `{order_ids}` -> `{results, scoring}`. */
export const checkOrderScoringLegacy: Handler<'checkOrderScoringLegacy'> = async ({ body, account }, { services }) => {
  const scoring = await services.sessions.ordersScoring(callerId(account), body.order_ids);
  return {
    status: 200,
    body: {
      results: body.order_ids.map((id) => ({ order_id: id, scoring: scoring.get(id) ?? false })),
      scoring: presentScoringMap(scoring),
    },
  };
};
