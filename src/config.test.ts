import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { ConfigError, FEE_SETTINGS, loadAbuseConfig, loadConfig } from './config.js';

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    expect(loadConfig({})).toEqual({
      port: 3000,
      host: '127.0.0.1',
      databaseUrl: undefined,
      dataDir: './.data',
      embeddedPgDir: '/var/lib/dots-exchange',
      seed: 'demo',
      admin: undefined,
      startingBalance: '1000',
      tokenTtlSecs: 2592000,
      heartbeatTimeoutSecs: 15,
      heartbeatSweepIntervalSecs: 1,
      logLevel: 'info',
      webConcurrency: 1,
      abuse: loadAbuseConfig({}),
      observability: { corsOrigins: [], catalogueMaxAgeSecs: 5, metricsPort: undefined, metricsToken: undefined, shutdownDelaySecs: 0 },
      apiKeys: { encryptionKey: undefined, windowSecs: 30 },
    });
  });

  it('loads the demo data by default into the embedded database only', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://db.internal/dots' }).seed).toBe('none');
    expect(loadConfig({ DATABASE_URL: 'postgres://db.internal/dots', SEED: 'demo' }).seed).toBe('demo');
    expect(loadConfig({}).seed).toBe('demo');
  });

  it("takes WEB_CONCURRENCY=auto as the number of cores", () => {
    expect(loadConfig({ WEB_CONCURRENCY: 'auto' }).webConcurrency).toBe(Math.min(64, availableParallelism()));
    expect(loadConfig({ WEB_CONCURRENCY: '3' }).webConcurrency).toBe(3);
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
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL must be a URL such as postgres://'],
    [{ DATABASE_URL: 'mysql://db/dots' }, "DATABASE_URL must start with postgres:// or postgresql://, got 'mysql://'"],
    [{ DATABASE_URL: 'postgres:///dots' }, 'DATABASE_URL names no host'],
    [{ LOG_LEVEL: 'verbose' }, "LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got 'verbose'"],
    [{ WEB_CONCURRENCY: '0' }, "WEB_CONCURRENCY must be 'auto' or a whole number from 1 to 64"],
    [{ WEB_CONCURRENCY: 'many' }, "WEB_CONCURRENCY must be 'auto' or a whole number from 1 to 64"],
    [{ EMBEDDED_PG_DIR: 'relative/dir' }, "EMBEDDED_PG_DIR must be an absolute path, got 'relative/dir'"],
  ])('refuses %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('reads every setting', () => {
    const config = loadConfig({
      PORT: '8080', HOST: '0.0.0.0', DATABASE_URL: 'postgres://x', DATA_DIR: '/var/dots', SEED: 'none',
      ADMIN_EMAIL: 'ops@x.io', ADMIN_PASSWORD: 'long-password', STARTING_BALANCE: '12.5',
      ORDER_HEARTBEAT_TIMEOUT_SECS: '30', ORDER_HEARTBEAT_SWEEP_INTERVAL_SECS: '0', LOG_LEVEL: 'debug', TOKEN_TTL_SECS: '3600',
      WEB_CONCURRENCY: '2', EMBEDDED_PG_DIR: '/srv/dots-pg',
    });
    expect(config).toEqual({
      port: 8080, host: '0.0.0.0', databaseUrl: 'postgres://x', dataDir: '/var/dots', seed: 'none',
      admin: { email: 'ops@x.io', password: 'long-password' }, startingBalance: '12.5', tokenTtlSecs: 3600,
      heartbeatTimeoutSecs: 30, heartbeatSweepIntervalSecs: 0, logLevel: 'debug',
      webConcurrency: 2, embeddedPgDir: '/srv/dots-pg',
      abuse: loadAbuseConfig({}, 2),
      observability: { corsOrigins: [], catalogueMaxAgeSecs: 5, metricsPort: undefined, metricsToken: undefined, shutdownDelaySecs: 0 },
      apiKeys: { encryptionKey: undefined, windowSecs: 30 },
    });
  });
});

describe('loadConfig: API keys', () => {
  it('reads the encryption key as hex or base64, and the signature window', () => {
    const hex = 'ab'.repeat(32);
    expect(loadConfig({ API_KEY_ENCRYPTION_KEY: hex, API_KEY_SIGNATURE_WINDOW_SECS: '60' }).apiKeys).toEqual({ encryptionKey: Buffer.from(hex, 'hex'), windowSecs: 60 });
    expect(loadConfig({ API_KEY_ENCRYPTION_KEY: Buffer.from(hex, 'hex').toString('base64') }).apiKeys.encryptionKey).toEqual(Buffer.from(hex, 'hex'));
    expect(loadConfig({ API_KEY_ENCRYPTION_KEY: Buffer.from(hex, 'hex').toString('base64url') }).apiKeys.encryptionKey).toEqual(Buffer.from(hex, 'hex'));
  });

  it('refuses a key that is not 32 bytes and a window out of range', () => {
    for (const key of ['ab'.repeat(31), 'secret', 'zz'.repeat(32)]) expect(() => loadConfig({ API_KEY_ENCRYPTION_KEY: key })).toThrow(/API_KEY_ENCRYPTION_KEY must be 32 random bytes/);
    for (const secs of ['4', '301', '1e2']) expect(() => loadConfig({ API_KEY_SIGNATURE_WINDOW_SECS: secs })).toThrow(/API_KEY_SIGNATURE_WINDOW_SECS must be a whole number from 5 to 300/);
  });
});

describe('loadConfig: sign-in through an OpenID Connect provider', () => {
  const base = { OIDC_ISSUER: 'https://id.example.com/realms/dots', OIDC_CLIENT_ID: 'dots-exchange' };

  it('is off when OIDC_ISSUER is unset', () => {
    expect(loadConfig({}).oidc).toBeUndefined();
    expect(loadConfig({ OIDC_ISSUER: '  ' }).oidc).toBeUndefined();
  });

  it('reads the provider settings, with RS256 alone accepted by default', () => {
    expect(loadConfig(base).oidc).toEqual({
      issuer: 'https://id.example.com/realms/dots',
      clientId: 'dots-exchange',
      clientSecret: undefined,
      allowedAlgs: ['RS256'],
      timeoutSecs: 5,
      jwksCooldownSecs: 30,
    });
    expect(
      loadConfig({ ...base, OIDC_CLIENT_SECRET: 's3cret', OIDC_ALLOWED_ALGS: 'ES256, RS256,HS256', OIDC_TIMEOUT_SECS: '2', OIDC_JWKS_COOLDOWN_SECS: '1' }).oidc,
    ).toEqual({ ...loadConfig(base).oidc, clientSecret: 's3cret', allowedAlgs: ['ES256', 'RS256', 'HS256'], timeoutSecs: 2, jwksCooldownSecs: 1 });
  });

  it('accepts a plain-http issuer on a loopback host only', () => {
    expect(loadConfig({ ...base, OIDC_ISSUER: 'http://127.0.0.1:8080/' }).oidc?.issuer).toBe('http://127.0.0.1:8080/');
    expect(loadConfig({ ...base, OIDC_ISSUER: 'http://localhost:8080' }).oidc?.issuer).toBe('http://localhost:8080');
    expect(loadConfig({ ...base, OIDC_ISSUER: 'http://[::1]:8080' }).oidc?.issuer).toBe('http://[::1]:8080');
  });

  it.each([
    [{ OIDC_CLIENT_ID: 'dots' }, 'OIDC_CLIENT_ID set without OIDC_ISSUER'],
    [{ OIDC_CLIENT_SECRET: 'x', OIDC_ALLOWED_ALGS: 'RS256' }, 'OIDC_CLIENT_SECRET, OIDC_ALLOWED_ALGS set without OIDC_ISSUER'],
    [{ OIDC_ISSUER: 'https://id.example.com' }, 'OIDC_CLIENT_ID must be set with OIDC_ISSUER'],
    [{ ...base, OIDC_ISSUER: 'id.example.com' }, "OIDC_ISSUER must be the provider's issuer URL"],
    [{ ...base, OIDC_ISSUER: 'http://id.example.com' }, 'OIDC_ISSUER must be an https:// URL (plain http:// only on a loopback host)'],
    [{ ...base, OIDC_ISSUER: 'ftp://127.0.0.1' }, 'OIDC_ISSUER must be an https:// URL'],
    [{ ...base, OIDC_ISSUER: 'https://id.example.com/?realm=x' }, 'OIDC_ISSUER must have no query, fragment or credentials'],
    [{ ...base, OIDC_ALLOWED_ALGS: 'none' }, "OIDC_ALLOWED_ALGS: 'none' is not accepted"],
    [{ ...base, OIDC_ALLOWED_ALGS: 'RS256,none' }, "OIDC_ALLOWED_ALGS: 'none' is not accepted"],
    [{ ...base, OIDC_ALLOWED_ALGS: ' , ' }, 'OIDC_ALLOWED_ALGS names no algorithm'],
    [{ ...base, OIDC_ALLOWED_ALGS: 'HS256' }, 'OIDC_ALLOWED_ALGS: HS256 is keyed by the client secret, and OIDC_CLIENT_SECRET is not set'],
    [{ ...base, OIDC_TIMEOUT_SECS: '0' }, 'OIDC_TIMEOUT_SECS must be a whole number from 1 to 60'],
    [{ ...base, OIDC_JWKS_COOLDOWN_SECS: 'soon' }, 'OIDC_JWKS_COOLDOWN_SECS must be a whole number from 1 to 3600'],
  ])('refuses inconsistent settings %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});

describe('loadConfig: metrics, readiness, CORS and caching', () => {
  it('reads every setting', () => {
    expect(
      loadConfig({
        CORS_ORIGINS: ' https://app.example.com , http://127.0.0.1:5173,*,https://app.example.com',
        CATALOGUE_CACHE_MAX_AGE_SECS: '30',
        METRICS_PORT: '9464',
        METRICS_TOKEN: 'a-long-metrics-token-1234',
        SHUTDOWN_DELAY_SECS: '5',
      }).observability,
    ).toEqual({
      corsOrigins: ['https://app.example.com', 'http://127.0.0.1:5173', '*'],
      catalogueMaxAgeSecs: 30,
      metricsPort: 9464,
      metricsToken: 'a-long-metrics-token-1234',
      shutdownDelaySecs: 5,
    });
    expect(loadConfig({ METRICS_PORT: '0', CATALOGUE_CACHE_MAX_AGE_SECS: '0' }).observability).toMatchObject({ metricsPort: 0, catalogueMaxAgeSecs: 0 });
  });

  it.each([
    [{ CORS_ORIGINS: 'https://app.example.com/' }, "CORS_ORIGINS must be '*' or origins such as"],
    [{ CORS_ORIGINS: 'app.example.com' }, "got 'app.example.com'"],
    [{ CORS_ORIGINS: 'https://a.example,,https://b.example' }, "got ''"],
    [{ CORS_ORIGINS: 'ftp://files.example' }, "got 'ftp://files.example'"],
    [{ CATALOGUE_CACHE_MAX_AGE_SECS: '-1' }, 'CATALOGUE_CACHE_MAX_AGE_SECS must be a whole number from 0 to 86400'],
    [{ METRICS_PORT: 'metrics' }, 'METRICS_PORT must be a whole number from 0 to 65535'],
    [{ METRICS_PORT: '3000' }, 'METRICS_PORT must differ from PORT (3000)'],
    [{ METRICS_TOKEN: 'short' }, 'METRICS_TOKEN must have at least 16 characters'],
    [{ METRICS_TOKEN: 'has spaces in it, sixteen+' }, 'METRICS_TOKEN may hold only'],
    [{ SHUTDOWN_DELAY_SECS: '61' }, 'SHUTDOWN_DELAY_SECS must be a whole number from 0 to 60'],
  ])('refuses %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(new RegExp(message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  });
});
