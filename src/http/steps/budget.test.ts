import type { Context } from 'koa';
import { describe, expect, it } from 'vitest';
import type { AuthScheme } from './authenticate.js';
import { signedBudget, type Budget } from './budget.js';
import type { Access, Call, Caller } from './call.js';

const scheme = (header: string): AuthScheme => ({ sent: (headers) => headers[header] !== undefined, callerOf: () => Promise.resolve({}) });
const session = scheme('authorization');
const keys = [scheme('kalshi-access-key'), scheme('poly_api_key')];

/** What signedBudget takes for a request, and whether it lets the request on. */
function taken(access: Access, headers: Record<string, string>, allowed = true): { going: boolean | Promise<boolean>; takes: Caller[] } {
  const takes: Caller[] = [];
  const take: Budget = (_koa, _limitClass, caller) => {
    takes.push(caller);
    return allowed;
  };
  const call = { koa: { request: { headers } } as unknown as Context, route: { access, limitClass: 'private-reads' } as Call['route'], caller: {} } as Call;
  return { going: signedBudget(take, session, keys)(call), takes };
}

describe('signedBudget', () => {
  it("takes a signed request from its address's budget (no account yet) before anything else, and stops it when spent", () => {
    expect(taken('signed', { 'kalshi-access-key': 'k' })).toEqual({ going: true, takes: [{}] });
    expect(taken('signed', { poly_api_key: 'k' })).toEqual({ going: true, takes: [{}] });
    expect(taken('signed', { 'kalshi-access-key': 'k' }, false)).toEqual({ going: false, takes: [{}] });
  });

  it('leaves every other request to the budget step: a token, no credentials, an operation keys do not reach', () => {
    expect(taken('signed', { authorization: 'Bearer t', 'kalshi-access-key': 'k' }).takes).toEqual([]);
    expect(taken('signed', {}).takes).toEqual([]);
    expect(taken('bearer', { 'kalshi-access-key': 'k' }).takes).toEqual([]);
    expect(taken('open', { 'kalshi-access-key': 'k' }).takes).toEqual([]);
  });
});
