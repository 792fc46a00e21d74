import type { IncomingMessage } from 'node:http';
import { BlockList } from 'node:net';
import { describe, expect, it } from 'vitest';
import { clientAddress } from './client-address.js';
import { FixedWindows, RequestLimiter } from './rate-limit.js';

describe('FixedWindows', () => {
  const start = 1_000_000;

  it('allows the budget within a window, then refuses until the window ends, counting refused requests too', () => {
    const windows = new FixedWindows(3, 10, start);
    expect([1, 2, 3].map((i) => windows.take('a', 1, start + i))).toEqual([
      { allowed: true, limit: 3, remaining: 2, resetSecs: 10 },
      { allowed: true, limit: 3, remaining: 1, resetSecs: 10 },
      { allowed: true, limit: 3, remaining: 0, resetSecs: 10 },
    ]);
    expect(windows.take('a', 1, start + 9_001)).toEqual({ allowed: false, limit: 3, remaining: 0, resetSecs: 1 });
    // the window opened at start + 1 ends at start + 10,001
    expect(windows.take('a', 1, start + 10_000)).toMatchObject({ allowed: false, resetSecs: 1 });
    expect(windows.take('a', 1, start + 10_001)).toEqual({ allowed: true, limit: 3, remaining: 2, resetSecs: 10 });
  });

  it('keeps a window per key', () => {
    const windows = new FixedWindows(1, 1, start);
    expect(windows.take('a', 1, start).allowed).toBe(true);
    expect(windows.take('a', 1, start).allowed).toBe(false);
    expect(windows.take('b', 1, start).allowed).toBe(true);
  });

  it('takes several points at once: a take past what is left is refused and uses them all', () => {
    const windows = new FixedWindows(10, 60, start);
    expect(windows.take('a', 5, start)).toMatchObject({ allowed: true, remaining: 5 });
    expect(windows.take('a', 6, start)).toMatchObject({ allowed: false, remaining: 0 });
    expect(windows.take('a', 1, start)).toMatchObject({ allowed: false, remaining: 0 });
  });

  it('drops ended windows a generation later, all at once, and keeps counting open ones meanwhile', () => {
    const windows = new FixedWindows(5, 1, start);
    for (let i = 0; i < 1000; i++) windows.take(`client-${i}`, 1, start);
    windows.take('late', 1, start + 999);
    expect(windows.size).toBe(1001);
    // a duration on, they are the previous generation: an ended window opens anew, an open one still counts
    expect(windows.take('client-1', 1, start + 1_000)).toMatchObject({ allowed: true, remaining: 4 });
    expect(windows.size).toBe(1002);
    expect(windows.take('late', 1, start + 1_500)).toMatchObject({ allowed: true, remaining: 3 });
    // another duration on, the first generation is dropped whole
    windows.take('next', 1, start + 2_000);
    expect(windows.size).toBe(2);
  });

  it('forgets every window after a whole generation without a request', () => {
    const windows = new FixedWindows(5, 1, start);
    for (let i = 0; i < 100; i++) windows.take(`client-${i}`, 1, start + 500);
    expect(windows.take('client-1', 1, start + 2_100)).toMatchObject({ allowed: true, remaining: 4 });
    expect(windows.size).toBe(1);
  });
});

describe('RequestLimiter', () => {
  const budget = (points: number) => ({ points, durationSecs: 60 });
  const budgets = { 'public-reads': budget(10), 'private-reads': budget(7), 'order-writes': budget(1), login: budget(5), registration: budget(5) };

  it('gives each worker process its share of every budget, at least one request', () => {
    const limiter = new RequestLimiter({ budgets, processes: 3 });
    expect(limiter.take('public-reads', 'address', 'x').limit).toBe(3);
    expect(limiter.take('private-reads', 'account', 'y').limit).toBe(2);
    expect(limiter.take('order-writes', 'account', 'y').limit).toBe(1);
  });

  it('keeps accounts and addresses apart, whatever their ids look like', () => {
    const limiter = new RequestLimiter({ budgets, processes: 1 });
    expect(limiter.take('order-writes', 'address', 'same').allowed).toBe(true);
    expect(limiter.take('order-writes', 'address', 'same').allowed).toBe(false);
    expect(limiter.take('order-writes', 'account', 'same').allowed).toBe(true);
    expect(limiter.take('public-reads', 'address', 'same')).toMatchObject({ allowed: true, remaining: 9 });
  });

  it("keeps API keys' budgets apart from the accounts' and the addresses'", () => {
    const limiter = new RequestLimiter({ budgets, keyBudgets: { 'private-reads': budget(2), 'order-writes': budget(4) }, processes: 1 });
    expect(limiter.takeKey('private-reads', 'k1')).toMatchObject({ limit: 2, remaining: 1 });
    expect(limiter.take('private-reads', 'account', 'k1')).toMatchObject({ limit: 7, remaining: 6 });
    expect(limiter.takeKey('login', 'k1')).toBeUndefined();
  });
});

describe('clientAddress', () => {
  const from = (remoteAddress: string | undefined, forwardedFor?: string) =>
    ({ socket: { remoteAddress }, headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } }) as unknown as IncomingMessage;
  const direct = { trustedProxies: undefined, ipv6PrefixLength: 64 };
  const proxies = new BlockList();
  proxies.addSubnet('10.0.0.0', 8, 'ipv4');
  proxies.addAddress('fd00::1', 'ipv6');
  const proxied = { trustedProxies: proxies, ipv6PrefixLength: 64 };

  it('is the socket peer without trusted proxies, X-Forwarded-For ignored', () => {
    expect(clientAddress(from('192.0.2.1', '198.51.100.9'), direct)).toBe('192.0.2.1');
    expect(clientAddress(from('::ffff:192.0.2.1'), direct)).toBe('192.0.2.1');
    expect(clientAddress(from(undefined), direct)).toBe('unknown');
  });

  it('counts an IPv6 client per network of the configured prefix length', () => {
    const a = clientAddress(from('2001:db8:1:2:aaaa:bbbb:cccc:dddd'), direct);
    expect(a).toBe('2001:db8:1:2:0:0:0:0/64');
    expect(clientAddress(from('2001:DB8:1:2::1'), direct)).toBe(a);
    expect(clientAddress(from('2001:db8:1:3::1'), direct)).not.toBe(a);
    expect(clientAddress(from('fe80::1%eth0'), direct)).toBe('fe80:0:0:0:0:0:0:0/64');
    expect(clientAddress(from('::1'), direct)).toBe('0:0:0:0:0:0:0:0/64');
    expect(clientAddress(from('2001:db8:1:2:aaaa::1'), { ...direct, ipv6PrefixLength: 56 })).toBe('2001:db8:1:0:0:0:0:0/56');
    expect(clientAddress(from('2001:db8:1:2:aaaa::1'), { ...direct, ipv6PrefixLength: 72 })).toBe('2001:db8:1:2:aa00:0:0:0/72');
    expect(clientAddress(from('2001:db8::5'), { ...direct, ipv6PrefixLength: 128 })).toBe('2001:db8:0:0:0:0:0:5/128');
    expect(clientAddress(from('::ffff:1.2.3.4'), direct)).toBe('1.2.3.4');
    expect(clientAddress(from('64:ff9b::1.2.3.4'), { ...direct, ipv6PrefixLength: 128 })).toBe('64:ff9b:0:0:0:0:102:304/128');
  });

  it('believes X-Forwarded-For from trusted proxies only, read from the last entry back', () => {
    expect(clientAddress(from('192.0.2.1', '198.51.100.9'), proxied)).toBe('192.0.2.1');
    expect(clientAddress(from('10.1.2.3', '198.51.100.9'), proxied)).toBe('198.51.100.9');
    expect(clientAddress(from('::ffff:10.1.2.3', '198.51.100.9'), proxied)).toBe('198.51.100.9');
    // what the client wrote itself, ahead of the entry its proxy added, is not believed
    expect(clientAddress(from('10.1.2.3', '203.0.113.5, 198.51.100.9'), proxied)).toBe('198.51.100.9');
    // a chain of trusted proxies
    expect(clientAddress(from('10.1.2.3', '203.0.113.5, 198.51.100.9, fd00::1, 10.9.9.9'), proxied)).toBe('198.51.100.9');
    expect(clientAddress(from('10.1.2.3', '2001:db8:1:2::7'), proxied)).toBe('2001:db8:1:2:0:0:0:0/64');
    // no entry, or one that is not an address: the proxy that sent it
    expect(clientAddress(from('10.1.2.3'), proxied)).toBe('10.1.2.3');
    expect(clientAddress(from('10.1.2.3', 'unknown'), proxied)).toBe('10.1.2.3');
    expect(clientAddress(from('10.1.2.3', '198.51.100.9, 10.0.0.1, garbage'), proxied)).toBe('10.1.2.3');
  });
});
