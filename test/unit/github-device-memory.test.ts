import { describe, expect, it } from 'vitest';
import { DeviceMemory } from '../../adapters/identity/github/device-memory.ts';

const entry = (expiresAt: number, interval = 5) => ({ interval, accessToken: null, expiresAt });

describe('github device memory', () => {
  it('forgets a code at its expiry', () => {
    let now = 1_000;
    const memory = new DeviceMemory(10, () => now);
    memory.remember('a', entry(2_000));
    expect(memory.get('a')).toMatchObject({ interval: 5 });
    now = 2_000;
    expect(memory.get('a')).toBeNull();
    expect(memory.size).toBe(0);
  });

  it('stays within its limit: expired codes go first, then the oldest', () => {
    let now = 0;
    const memory = new DeviceMemory(2, () => now);
    memory.remember('old', entry(100));
    memory.remember('mid', entry(10_000));
    now = 200; // "old" has expired
    memory.remember('new', entry(10_000));
    expect([memory.get('old'), memory.get('mid'), memory.get('new')].map((e) => e !== null)).toEqual([false, true, true]);
    memory.remember('newest', entry(10_000));
    expect(memory.size).toBe(2);
    expect(memory.get('mid')).toBeNull();
    expect(memory.get('newest')).not.toBeNull();
  });

  it('remembering a code again makes it the newest', () => {
    const memory = new DeviceMemory(2, () => 0);
    memory.remember('a', entry(10));
    memory.remember('b', entry(10));
    memory.remember('a', entry(10, 15));
    memory.remember('c', entry(10));
    expect(memory.get('b')).toBeNull();
    expect(memory.get('a')).toMatchObject({ interval: 15 });
  });
});
