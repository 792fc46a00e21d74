import { describe, expect, it } from 'vitest';
import type { Context } from 'koa';
import type { Account } from '../../domain/accounts/service.js';
import { admit, authenticate, type AuthScheme } from './authenticate.js';
import type { Access, Call, Caller } from './call.js';

const account = { id: 'acc-1', role: 'trader' } as unknown as Account;

/** A scheme sent when its header is, naming the account (or refusing) and recording that it was asked. */
function scheme(header: string, caller: Caller, asked: string[]): AuthScheme {
  return {
    sent: (headers) => headers[header] !== undefined,
    callerOf: () => {
      asked.push(header);
      return Promise.resolve({ ...caller });
    },
  };
}

function callOf(access: Access, headers: Record<string, string>): Call {
  const koa = { request: { headers }, state: {}, response: {}, res: {} } as unknown as Context;
  return { koa, route: { access } as Call['route'], caller: {} } as Call;
}

async function run(access: Access, headers: Record<string, string>, session: Caller = {}, key: Caller = { account, key: { keyId: 'k' } as Caller['key'] }) {
  const asked: string[] = [];
  const call = callOf(access, headers);
  const going = await authenticate(scheme('authorization', session, asked), [scheme('kalshi-access-key', key, asked), scheme('poly_api_key', key, asked)])(call);
  return { going, asked, call };
}

describe('authenticate', () => {
  it('looks no one up for an open operation', async () => {
    const { going, asked, call } = await run('open', { authorization: 'Bearer t' });
    expect(going).toBe(true);
    expect(asked).toEqual([]);
    expect(call.caller).toEqual({});
  });

  it('takes the session when Authorization is sent, even beside a key', async () => {
    const { asked, call } = await run('signed', { authorization: 'Bearer t', 'kalshi-access-key': 'k' }, { account, token: 't' });
    expect(asked).toEqual(['authorization']);
    expect(call.caller.account).toBe(account);
    expect(call.koa.state.accountId).toBe('acc-1');
  });

  it('takes the first key scheme whose headers are sent', async () => {
    expect((await run('signed', { poly_api_key: 'k', 'kalshi-access-key': 'k' })).asked).toEqual(['kalshi-access-key']);
    expect((await run('signed', { poly_api_key: 'k' })).asked).toEqual(['poly_api_key']);
  });

  it('asks the session scheme when nothing is sent', async () => {
    const { asked, call } = await run('signed', {});
    expect(asked).toEqual(['authorization']);
    expect(call.caller.account).toBeUndefined();
  });

  it('tells a key that an operation takes session tokens only', async () => {
    const { asked, call } = await run('bearer', { 'kalshi-access-key': 'k' });
    expect(asked).toEqual(['authorization']);
    expect(call.caller.refused).toMatch(/session token .* only/);
  });
});

describe('admit', () => {
  const answered = (access: Access, caller: Caller) => {
    const call = callOf(access, {});
    call.caller = caller;
    let sent: unknown;
    Object.assign(call.koa.res, { hasHeader: () => false, setHeader: () => undefined });
    Object.defineProperty(call.koa.response, 'body', { set: (value: string) => void (sent = JSON.parse(value)) });
    return { going: admit(call), sent: sent as { error?: { code: string; message: string } } | undefined, status: call.koa.response.status };
  };

  it('lets a caller with an account, or anyone on an open operation, through', () => {
    expect(answered('bearer', { account }).going).toBe(true);
    expect(answered('open', {}).going).toBe(true);
  });

  it('answers 401 with why the credentials were refused, or that there were none', () => {
    expect(answered('signed', { refused: 'unknown or revoked API key' })).toMatchObject({ going: false, status: 401, sent: { error: { code: 'unauthorized', message: 'unknown or revoked API key' } } });
    expect(answered('bearer', {}).sent?.error?.message).toBe('missing or invalid bearer token');
    expect(answered('closed', { account }).going).toBe(false);
  });
});
