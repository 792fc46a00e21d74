import { BlockList } from 'node:net';
import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadAbuseConfig, loadConfig } from './config.js';

describe('loadAbuseConfig', () => {
  it('has the documented defaults', () => {
    expect(loadAbuseConfig({})).toEqual({
      rateLimits: true,
      clients: { trustedProxies: undefined, ipv6PrefixLength: 64 },
      budgets: {
        'public-reads': { points: 100, durationSecs: 1 },
        'private-reads': { points: 100, durationSecs: 1 },
        'order-writes': { points: 50, durationSecs: 1 },
        login: { points: 20, durationSecs: 60 },
        registration: { points: 5, durationSecs: 3600 },
      },
      keyBudgets: {
        'private-reads': { points: 100, durationSecs: 1 },
        'order-writes': { points: 50, durationSecs: 1 },
      },
      keyGeneration: { points: 5, durationSecs: 60 },
      processes: 1,
      login: { freeFailures: 5, backoffBaseMs: 1000, backoffMaxSecs: 900 },
      // by core count: half the cores hashing, twelve waiting places a core (at least two counted)
      passwordHashing: { concurrency: Math.max(1, Math.floor(availableParallelism() / 2)), queue: 12 * Math.max(2, availableParallelism()) },
      requestBodyTimeoutMs: 30_000,
      realtime: {
        maxConnectionsPerAddress: 50,
        maxSubscriptions: 100,
        snapshotsPerSec: 200,
        upgrades: { points: 10, durationSecs: 1 },
        commands: { points: 50, durationSecs: 1 },
      },
    });
  });

  it('reads every setting, the worker count from WEB_CONCURRENCY', () => {
    const { abuse } = loadConfig({
      RATE_LIMITS: 'off', TRUST_PROXY: '10.0.0.0/8, 192.0.2.7,fd00::/8', CLIENT_IPV6_PREFIX_LENGTH: '56', RATE_LIMIT_PUBLIC_READS: '10/2', RATE_LIMIT_PRIVATE_READS: '20/3',
      RATE_LIMIT_ORDER_WRITES: '30/4', RATE_LIMIT_LOGIN: '40/5', RATE_LIMIT_REGISTRATION: '1/86400', WEB_CONCURRENCY: '4',
      LOGIN_FREE_FAILURES: '3', LOGIN_BACKOFF_BASE_MS: '10', LOGIN_BACKOFF_MAX_SECS: '2', PASSWORD_HASH_CONCURRENCY: '1',
      PASSWORD_HASH_QUEUE: '0', REQUEST_BODY_TIMEOUT_MS: '500', WS_MAX_CONNECTIONS_PER_ADDRESS: '3', WS_MAX_SUBSCRIPTIONS: '7',
      WS_SNAPSHOTS_PER_SEC: '9', RATE_LIMIT_KEY_PRIVATE_READS: '6/7', RATE_LIMIT_KEY_ORDER_WRITES: '8/9',
      RATE_LIMIT_KEY_GENERATION: '2/600', RATE_LIMIT_WS_UPGRADES: '11/12', RATE_LIMIT_WS_COMMANDS: '13/14',
    });
    expect(abuse).toEqual({
      rateLimits: false,
      clients: { trustedProxies: expect.any(BlockList) as BlockList, ipv6PrefixLength: 56 },
      budgets: {
        'public-reads': { points: 10, durationSecs: 2 },
        'private-reads': { points: 20, durationSecs: 3 },
        'order-writes': { points: 30, durationSecs: 4 },
        login: { points: 40, durationSecs: 5 },
        registration: { points: 1, durationSecs: 86400 },
      },
      keyBudgets: {
        'private-reads': { points: 6, durationSecs: 7 },
        'order-writes': { points: 8, durationSecs: 9 },
      },
      keyGeneration: { points: 2, durationSecs: 600 },
      processes: 4,
      login: { freeFailures: 3, backoffBaseMs: 10, backoffMaxSecs: 2 },
      passwordHashing: { concurrency: 1, queue: 0 },
      requestBodyTimeoutMs: 500,
      realtime: { maxConnectionsPerAddress: 3, maxSubscriptions: 7, snapshotsPerSec: 9, upgrades: { points: 11, durationSecs: 12 }, commands: { points: 13, durationSecs: 14 } },
    });
    const proxies = abuse.clients.trustedProxies!;
    for (const trusted of ['10.255.0.1', '192.0.2.7', 'fd00::1', '::ffff:10.0.0.1']) expect(proxies.check(trusted, trusted.includes(':') ? 'ipv6' : 'ipv4'), trusted).toBe(true);
    for (const other of ['11.0.0.1', '192.0.2.8', 'fe00::1']) expect(proxies.check(other, other.includes(':') ? 'ipv6' : 'ipv4'), other).toBe(false);
  });

  it("takes TRUST_PROXY=off as no proxy", () => {
    expect(loadAbuseConfig({ TRUST_PROXY: 'off' }).clients.trustedProxies).toBeUndefined();
  });

  it('counts WEB_CONCURRENCY=auto as one worker per core', () => {
    expect(loadConfig({ WEB_CONCURRENCY: 'auto' }).abuse.processes).toBe(Math.min(64, availableParallelism()));
  });

  it.each([
    [{ RATE_LIMITS: 'maybe' }, 'RATE_LIMITS must be on or off'],
    [{ TRUST_PROXY: 'yes please' }, "TRUST_PROXY must be 'off' or the addresses or CIDR ranges of your proxies"],
    [{ TRUST_PROXY: 'on' }, "TRUST_PROXY must be 'off' or the addresses or CIDR ranges of your proxies, comma-separated (e.g. 10.0.0.0/8,192.0.2.7,fd00::/8), not 'on'"],
    [{ TRUST_PROXY: '10.0.0.0/33' }, "got '10.0.0.0/33'"],
    [{ TRUST_PROXY: 'fd00::/129' }, "got 'fd00::/129'"],
    [{ TRUST_PROXY: '10.0.0.1,' }, "got ''"],
    [{ TRUST_PROXY: '10.0.0.256' }, "got '10.0.0.256'"],
    [{ TRUST_PROXY: '10.0.0.0/8/8' }, "got '10.0.0.0/8/8'"],
    [{ CLIENT_IPV6_PREFIX_LENGTH: '8' }, 'CLIENT_IPV6_PREFIX_LENGTH must be a whole number from 16 to 128'],
    [{ CLIENT_IPV6_PREFIX_LENGTH: '129' }, 'CLIENT_IPV6_PREFIX_LENGTH must be a whole number from 16 to 128'],
    [{ RATE_LIMIT_KEY_GENERATION: '0/60' }, 'RATE_LIMIT_KEY_GENERATION must be <requests>/<seconds>'],
    [{ RATE_LIMIT_WS_UPGRADES: '10' }, 'RATE_LIMIT_WS_UPGRADES must be <requests>/<seconds>'],
    [{ RATE_LIMIT_WS_COMMANDS: 'x/1' }, 'RATE_LIMIT_WS_COMMANDS must be <requests>/<seconds>'],
    [{ RATE_LIMIT_PUBLIC_READS: '100' }, 'RATE_LIMIT_PUBLIC_READS must be <requests>/<seconds>'],
    [{ RATE_LIMIT_ORDER_WRITES: '0/1' }, 'RATE_LIMIT_ORDER_WRITES must be <requests>/<seconds>'],
    [{ RATE_LIMIT_LOGIN: '5/0' }, 'RATE_LIMIT_LOGIN must be <requests>/<seconds>'],
    [{ RATE_LIMIT_REGISTRATION: '-1/60' }, 'RATE_LIMIT_REGISTRATION must be <requests>/<seconds>'],
    [{ LOGIN_FREE_FAILURES: '0' }, 'LOGIN_FREE_FAILURES must be a whole number'],
    [{ PASSWORD_HASH_CONCURRENCY: 'x' }, 'PASSWORD_HASH_CONCURRENCY must be a whole number'],
    [{ PASSWORD_HASH_CONCURRENCY: '0' }, 'PASSWORD_HASH_CONCURRENCY must be a whole number from 1 to 64'],
    [{ PASSWORD_HASH_QUEUE: '-1' }, 'PASSWORD_HASH_QUEUE must be a whole number from 0 to 100000'],
    [{ REQUEST_BODY_TIMEOUT_MS: '5' }, 'REQUEST_BODY_TIMEOUT_MS must be a whole number'],
    [{ WS_SNAPSHOTS_PER_SEC: '0' }, 'WS_SNAPSHOTS_PER_SEC must be a whole number'],
  ])('refuses %j (through loadConfig too)', (env, message) => {
    expect(() => loadAbuseConfig(env)).toThrow(message);
    expect(() => loadConfig(env)).toThrow(ConfigError);
  });
});
