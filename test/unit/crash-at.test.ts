import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../hosts/composition/config.ts';
import { crashOverrides, installCrashAt } from '../../hosts/composition/crash-at.ts';

describe('the crash test hooks (docs/decisions.md, "Crash anywhere, lose nothing")', () => {
  it('refuse a crash point that does not exist, naming those that do', () => {
    expect(() => installCrashAt({ CRASH_AT: 'after-lunch' })).toThrow(ConfigError);
    expect(() => installCrashAt({ CRASH_AT: 'after-lunch' })).toThrow(/after-rental-commit/);
  });

  it('leave the clock alone unless an offset is given, and move it by the offset when one is', () => {
    expect(crashOverrides({})).toEqual({});
    const { clock } = crashOverrides({ CRASH_CLOCK_OFFSET_MS: String(3_600_000) });
    expect(Math.abs(clock!.now().getTime() - Date.now() - 3_600_000)).toBeLessThan(1_000);
  });
});
