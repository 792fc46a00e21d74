import { describe, expect, it } from 'vitest';
import { ConfigError, FEE_SETTINGS, loadAbuseConfig, loadConfig } from './config.js';

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    expect(loadConfig({})).toEqual({
      port: 3000,
      host: '127.0.0.1',
      databaseUrl: undefined,
      dataDir: './.data',
      seed: 'demo',
      admin: undefined,
      startingBalance: '1000',
      tokenTtlSecs: 2592000,
      heartbeatTimeoutSecs: 15,
      heartbeatSweepIntervalSecs: 1,
      logLevel: 'info',
      abuse: loadAbuseConfig({}),
    });
  });

  it.each(FEE_SETTINGS)('refuses a non-zero %s, naming it (fail-closed)', (name) => {
    expect(() => loadConfig({ [name]: '5' })).toThrow(new ConfigError(`${name}=5 is refused: the exchange runs a fee-free profile and every fee must be 0`));
    expect(() => loadConfig({ [name]: 'abc' })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: '0.0001' })).toThrow(ConfigError);
  });

  it('accepts fee settings that are zero', () => {
    expect(() => loadConfig({ PLATFORM_MAKER_FEE_BPS: '0', BUILDER_TAKER_FEE_BPS: '0.00', SIGNED_ORDER_FEE_BPS: '' })).not.toThrow();
  });

  it.each([
    [{ PORT: 'http' }, 'PORT must be a whole number from 0 to 65535'],
    [{ PORT: '70000' }, 'PORT must be a whole number from 0 to 65535'],
    [{ SEED: 'lots' }, "SEED must be 'demo' or 'none'"],
    [{ STARTING_BALANCE: '-5' }, 'STARTING_BALANCE must be a non-negative decimal'],
    [{ STARTING_BALANCE: '1e3' }, 'STARTING_BALANCE must be a non-negative decimal'],
    [{ ADMIN_EMAIL: 'a@b.c' }, 'ADMIN_EMAIL and ADMIN_PASSWORD must be set together'],
    [{ ADMIN_EMAIL: 'a@b.c', ADMIN_PASSWORD: 'short' }, 'ADMIN_PASSWORD must have at least 8 characters'],
    [{ ORDER_HEARTBEAT_SWEEP_INTERVAL_SECS: '-1' }, 'ORDER_HEARTBEAT_SWEEP_INTERVAL_SECS must be a whole number'],
  ])('refuses %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('reads every setting', () => {
    const config = loadConfig({
      PORT: '8080', HOST: '0.0.0.0', DATABASE_URL: 'postgres://x', DATA_DIR: '/var/dots', SEED: 'none',
      ADMIN_EMAIL: 'ops@x.io', ADMIN_PASSWORD: 'long-password', STARTING_BALANCE: '12.5',
      ORDER_HEARTBEAT_TIMEOUT_SECS: '30', ORDER_HEARTBEAT_SWEEP_INTERVAL_SECS: '0', LOG_LEVEL: 'debug', TOKEN_TTL_SECS: '3600',
    });
    expect(config).toEqual({
      port: 8080, host: '0.0.0.0', databaseUrl: 'postgres://x', dataDir: '/var/dots', seed: 'none',
      admin: { email: 'ops@x.io', password: 'long-password' }, startingBalance: '12.5', tokenTtlSecs: 3600,
      heartbeatTimeoutSecs: 30, heartbeatSweepIntervalSecs: 0, logLevel: 'debug',
      abuse: loadAbuseConfig({}),
    });
  });
});
