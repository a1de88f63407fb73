import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allowedAddress, forbiddenAddress } from '../../adapters/webhooks/address-rules.ts';
import { failedTooLong, nextAttemptAt, RETRY_WINDOW_MS } from '../../core/webhooks/retry.ts';
import { instanceEvents } from '../../core/events/instance-events.ts';
import type { Instance, InstanceStatus } from '../../core/rentals/instance.ts';

const STATUSES: InstanceStatus[] = ['provisioning', 'running', 'rebooting', 'terminating', 'terminated', 'failed'];
const instanceAt = (status: InstanceStatus, preemptedAt: Date | null): Instance =>
  ({ id: 'ins_x', tenantId: 'ten_x', status, name: null, nodeId: 'sandbox:1', provider: 'sandbox', gpuType: 'H100', gpuCount: 1, createdAt: new Date(0), startedAt: null, terminatedAt: null, failure: null, preemptedAt }) as unknown as Instance;

describe('webhook target addresses (SSRF)', () => {
  it('refuses private, loopback, link-local, reserved and mapped forms; lets public addresses through', () => {
    const refused = ['10.0.0.1', '127.0.0.1', '127.255.0.9', '169.254.169.254', '172.16.0.1', '172.31.255.255', '192.168.1.1', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fd12::3', 'fc00::1', '::ffff:10.0.0.1', '::ffff:127.0.0.1', 'ff02::1', 'not-an-ip'];
    for (const address of refused) expect(forbiddenAddress(address), address).toBe(true);
    for (const address of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111', '::ffff:93.184.216.34']) expect(forbiddenAddress(address), address).toBe(false);
  });

  it('refuses IPv4 inside IPv6 and every IPv6 range but global unicast (ipaddr.js ranges, within 2000::/3)', () => {
    const refused = [
      '::7f00:1', '::127.0.0.1', '::a00:1', '::ffff:7f00:1', '::ffff:a9fe:a9fe', '::ffff:0:7f00:1', '::ffff:0:a00:1', '2002:7f00:1::1', '2002:a00:1::1', '2002:5db8:d822::1',
      '64:ff9b::7f00:1', '64:ff9b::a00:1', '64:ff9b:1::a00:1', '2001:0:4136:e378:8000:63bf:80ff:fffe', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001:db8::1', '2001:2::1', '100::1',
      '5f00::1', '3fff::1', '4000::1', 'e000::1', '1::1', 'fec0::1', 'fe80::1%eth0', '::ffff:1.2.3', '127.1', '0x7f.0.0.1', '',
    ];
    for (const address of refused) expect(forbiddenAddress(address), address).toBe(true);
    for (const address of ['2a00:1450:4001:82b::200e', '2001:4860:4860::8888', '2600::1', '::ffff:8.8.8.8', '::ffff:808:808']) expect(forbiddenAddress(address), address).toBe(false);
  });

  it('an IPv4 address is judged the same however IPv6 carries it: mapped as itself, compatible, translated, 6to4, NAT64 never', () => {
    const octet = fc.integer({ min: 0, max: 255 });
    fc.assert(
      fc.property(fc.tuple(octet, octet, octet, octet), (parts) => {
        const v4 = parts.join('.');
        const hex = (a: number, b: number) => ((a << 8) | b).toString(16);
        const [hi, lo] = [hex(parts[0]!, parts[1]!), hex(parts[2]!, parts[3]!)];
        expect(forbiddenAddress(`::ffff:${v4}`)).toBe(forbiddenAddress(v4));
        expect(forbiddenAddress(`::ffff:${hi}:${lo}`)).toBe(forbiddenAddress(v4));
        for (const carried of [`::${hi}:${lo}`, `::ffff:0:${hi}:${lo}`, `2002:${hi}:${lo}::1`, `64:ff9b::${hi}:${lo}`, `2001:0:${hi}:${lo}::1`]) expect(forbiddenAddress(carried), carried).toBe(true);
      }),
    );
  });

  it('admits loopback only for the localhost names, and only when allowed', () => {
    expect(allowedAddress('127.0.0.1', 'localhost', true)).toBe(true);
    expect(allowedAddress('::1', '::1', true)).toBe(true);
    expect(allowedAddress('127.0.0.1', 'localhost', false)).toBe(false);
    expect(allowedAddress('127.0.0.1', 'rebind.example', true)).toBe(false);
    expect(allowedAddress('10.0.0.1', 'localhost', true)).toBe(false);
    expect(allowedAddress('93.184.216.34', 'example.com', false)).toBe(true);
    // loopback carried in IPv6 is not the loopback the localhost names may reach
    expect(allowedAddress('::ffff:127.0.0.1', 'localhost', true)).toBe(true);
    for (const address of ['::7f00:1', '::ffff:0:7f00:1', '2002:7f00:1::1']) expect(allowedAddress(address, 'localhost', true), address).toBe(false);
  });
});

describe('webhook retry schedule', () => {
  it('1, 4, 16, 64, 256 minutes, then every 6 hours, the last try at 24 hours', () => {
    const first = new Date('2026-11-21T00:00:00Z');
    const times: number[] = [];
    let at: Date | null = first;
    for (let attempt = 1; at; attempt++) {
      times.push((at.getTime() - first.getTime()) / 60_000);
      at = nextAttemptAt(attempt, first, at);
    }
    expect(times).toEqual([0, 1, 5, 21, 85, 341, 701, 1061, 1421, 1440]);
    expect(failedTooLong(first, new Date(first.getTime() + RETRY_WINDOW_MS))).toBe(true);
    expect(failedTooLong(first, new Date(first.getTime() + RETRY_WINDOW_MS - 1))).toBe(false);
  });

  it('never schedules past the window, and always later than now', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 0, max: RETRY_WINDOW_MS * 2 }), (attempt, elapsed) => {
        const first = new Date('2026-11-21T00:00:00Z');
        const now = new Date(first.getTime() + elapsed);
        const next = nextAttemptAt(attempt, first, now);
        if (elapsed >= RETRY_WINDOW_MS) return next === null;
        return next !== null && next.getTime() > now.getTime() && next.getTime() <= first.getTime() + RETRY_WINDOW_MS;
      }),
    );
  });
});

describe('instance events', () => {
  it('tell the first start, the end, a failure and a preemption, each once, and nothing else', () => {
    fc.assert(
      fc.property(fc.constantFrom(...STATUSES), fc.constantFrom(...STATUSES), fc.boolean(), fc.boolean(), (from, to, wasPreempted, isPreempted) => {
        const at = new Date(1_000);
        const types = instanceEvents({ status: from, preemptedAt: wasPreempted ? at : null }, instanceAt(to, isPreempted || wasPreempted ? at : null)).map((e) => e.type);
        const expected = [
          ...(isPreempted && !wasPreempted ? ['instance.preempted'] : []),
          ...(from === to ? [] : from === 'provisioning' && to === 'running' ? ['instance.running'] : to === 'terminated' ? ['instance.terminated'] : to === 'failed' ? ['instance.failed'] : []),
        ];
        expect(types).toEqual(expected);
      }),
    );
    // a reboot coming back is not news; without a previous state, an end or a failure still is
    expect(instanceEvents({ status: 'rebooting', preemptedAt: null }, instanceAt('running', null))).toEqual([]);
    expect(instanceEvents(null, instanceAt('failed', null)).map((e) => e.type)).toEqual(['instance.failed']);
  });
});
