import { describe, expect, it } from 'vitest';
import { SessionCache } from './session-cache.js';

const HOUR = 3_600_000;
const session = (userId: string, expiresAtMs = 10 * HOUR) => ({ account: { id: userId }, userId, expiresAt: new Date(expiresAtMs) });

function openCache(options = { ttlMs: 1000, maxEntries: 10 }) {
  const cache = new SessionCache<{ id: string }>(options);
  cache.open();
  return cache;
}

describe('SessionCache', () => {
  it('serves a stored session until it ages out', () => {
    const cache = openCache();
    cache.store('a', session('u1'), cache.generation, 0);
    expect(cache.get('a', 999)).toEqual({ id: 'u1' });
    expect(cache.get('a', 1000)).toBeUndefined();
    expect(cache.get('b', 0)).toBeUndefined();
  });

  it('never serves a session past its own expiry', () => {
    const cache = openCache({ ttlMs: HOUR, maxEntries: 10 });
    cache.store('a', session('u1', 500), cache.generation, 0);
    expect(cache.get('a', 499)).toEqual({ id: 'u1' });
    expect(cache.get('a', 500)).toBeUndefined();
  });

  it('serves nothing and stores nothing until opened, nor after it is closed', () => {
    const cache = new SessionCache<{ id: string }>({ ttlMs: 1000, maxEntries: 10 });
    cache.store('a', session('u1'), cache.generation, 0);
    expect(cache.get('a', 1)).toBeUndefined();
    cache.open();
    cache.store('a', session('u1'), cache.generation, 0);
    cache.close();
    expect(cache.get('a', 1)).toBeUndefined();
    cache.open();
    expect(cache.get('a', 1)).toBeUndefined();
  });

  it('forgets a token, every session of an account, or everything, as notified', () => {
    const cache = openCache();
    for (const [key, user] of [['a', 'u1'], ['b', 'u1'], ['c', 'u2'], ['d', 'u3']] as const) cache.store(key, session(user), cache.generation, 0);
    cache.changed('token:c');
    expect(cache.get('c', 1)).toBeUndefined();
    expect(cache.get('d', 1)).toEqual({ id: 'u3' });
    cache.changed('user:u1');
    expect([cache.get('a', 1), cache.get('b', 1)]).toEqual([undefined, undefined]);
    expect(cache.get('d', 1)).toEqual({ id: 'u3' });
    cache.changed('*');
    expect(cache.get('d', 1)).toBeUndefined();
  });

  it('forgets an API key in a key cache, and ignores the other kind of entry', () => {
    const keys = new SessionCache<{ id: string }>({ ttlMs: 1000, maxEntries: 10, kind: 'key' });
    keys.open();
    const sessions = openCache();
    for (const cache of [keys, sessions]) for (const [key, user] of [['k1', 'u1'], ['k2', 'u2']] as const) cache.store(key, session(user), cache.generation, 0);
    for (const cache of [keys, sessions]) cache.changed('key:k1');
    expect([keys.get('k1', 1), keys.get('k2', 1)]).toEqual([undefined, { id: 'u2' }]);
    expect([sessions.get('k1', 1), sessions.get('k2', 1)]).toEqual([{ id: 'u1' }, { id: 'u2' }]);
    keys.changed('token:k2');
    expect(keys.get('k2', 1)).toEqual({ id: 'u2' });
    keys.changed('user:u2');
    expect(keys.get('k2', 1)).toBeUndefined();
  });

  it('does not store what a lookup found if anything changed while it ran', () => {
    const cache = openCache();
    const before = cache.generation;
    cache.changed('token:zzz');
    cache.store('a', session('u1'), before, 0);
    expect(cache.get('a', 1)).toBeUndefined();
    const reopened = cache.generation;
    cache.close();
    cache.open();
    cache.store('a', session('u1'), reopened, 0);
    expect(cache.get('a', 1)).toBeUndefined();
  });

  it('keeps at most maxEntries, dropping the oldest', () => {
    const cache = openCache({ ttlMs: 1000, maxEntries: 2 });
    cache.store('a', session('u1'), cache.generation, 0);
    cache.store('b', session('u2'), cache.generation, 0);
    cache.store('c', session('u3'), cache.generation, 0);
    expect(cache.get('a', 1)).toBeUndefined();
    expect([cache.get('b', 1), cache.get('c', 1)]).toEqual([{ id: 'u2' }, { id: 'u3' }]);
  });
});
