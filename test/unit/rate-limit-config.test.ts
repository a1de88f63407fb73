import { describe, expect, it } from 'vitest';
import { configFromEnv } from '../../hosts/composition/config.ts';

describe('OPERATOR_RATE_LIMIT_PER_MINUTE', () => {
  it('gives operators 600 requests a minute by default, and what the variable says otherwise', () => {
    expect(configFromEnv({}).rateLimits.operatorPerMinute).toBe(600);
    expect(configFromEnv({ OPERATOR_RATE_LIMIT_PER_MINUTE: '1200' }).rateLimits.operatorPerMinute).toBe(1200);
  });

  it('refuses a value that is not a positive whole number, naming the variable', () => {
    for (const value of ['0', '-5', '1.5', 'lots']) {
      expect(() => configFromEnv({ OPERATOR_RATE_LIMIT_PER_MINUTE: value })).toThrow(/OPERATOR_RATE_LIMIT_PER_MINUTE/);
    }
  });
});
