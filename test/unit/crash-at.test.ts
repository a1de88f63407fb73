import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../hosts/composition/config.ts';
import { crashOverrides, crashSweepPattern, installCrashAt } from '../../hosts/composition/crash-at.ts';

describe('the crash test hooks (docs/decisions.md, "Crash anywhere, lose nothing")', () => {
  it('refuse a crash point that does not exist, naming those that do', () => {
    expect(() => installCrashAt({ CRASH_AT: 'after-lunch' })).toThrow(ConfigError);
    expect(() => installCrashAt({ CRASH_AT: 'after-lunch' })).toThrow(/after-rental-commit/);
  });

  it('leave the clock alone unless a clock file is given, and follow the offset the file holds as it moves', async () => {
    expect(crashOverrides({})).toEqual({});
    const dir = mkdtempSync(join(tmpdir(), 'crash-clock-'));
    try {
      const file = join(dir, 'offset');
      writeFileSync(file, String(3_600_000));
      const { clock } = crashOverrides({ CRASH_CLOCK_FILE: file });
      expect(Math.abs(clock!.now().getTime() - Date.now() - 3_600_000)).toBeLessThan(1_000);
      writeFileSync(file, String(7_200_000));
      // every process on the file sees the move within a few milliseconds: poll for it with a deadline
      const deadline = Date.now() + 2_000;
      while (clock!.now().getTime() - Date.now() < 7_000_000 && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
      expect(Math.abs(clock!.now().getTime() - Date.now() - 7_200_000)).toBeLessThan(1_000);
      writeFileSync(file, 'soon');
      expect(() => crashOverrides({ CRASH_CLOCK_FILE: file })).toThrow(/whole number/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('let the sweep daemon run a pass every few seconds, and refuse a cadence cron cannot say', () => {
    expect(crashSweepPattern({})).toBeNull();
    expect(crashSweepPattern({ CRASH_SWEEP_SECONDS: '2' })).toBe('*/2 * * * * *');
    expect(() => crashSweepPattern({ CRASH_SWEEP_SECONDS: '90' })).toThrow(ConfigError);
  });
});
