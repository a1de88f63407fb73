import { describe, expect, it } from 'vitest';
import { ConfigError, configFromEnv } from '../../hosts/composition/config.ts';

describe('configuration from the environment', () => {
  it('runs on embedded defaults with nothing set', () => {
    const config = configFromEnv({});
    expect(config).toMatchObject({
      port: 8080,
      storage: { kind: 'pglite', dataDir: './data' },
      operatorKeys: [],
      rateLimits: { publicPerMinute: 30, perTokenPerMinute: 600 },
      logLevel: 'info',
    });
  });

  it('uses PostgreSQL when DATABASE_URL is set, and several operator keys', () => {
    const config = configFromEnv({
      DATABASE_URL: 'postgres://u@db:5432/gcp',
      OPERATOR_KEYS: 'first-key-0123456789, second-key-0123456789',
      RATE_LIMIT_PER_MINUTE: '60',
    });
    expect(config.storage).toEqual({ kind: 'postgres', url: 'postgres://u@db:5432/gcp' });
    expect(config.operatorKeys).toEqual(['first-key-0123456789', 'second-key-0123456789']);
    expect(config.rateLimits.perTokenPerMinute).toBe(60);
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://x@y/z'],
    ['DATABASE_URL', 'not a url'],
    ['OPERATOR_KEYS', 'short'],
    ['LOG_LEVEL', 'loud'],
    ['RATE_LIMIT_PUBLIC_PER_MINUTE', '0'],
    ['RATE_LIMIT_PER_MINUTE', '-1'],
  ])('stops on a bad %s with a message naming it', (name, value) => {
    expect(() => configFromEnv({ [name]: value })).toThrow(ConfigError);
    expect(() => configFromEnv({ [name]: value })).toThrow(new RegExp(name));
  });
});
