import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decimalText,
  labelFromEnv,
  machineFromWire,
  machineStatus,
  offerFromWire,
  parseGeolocation,
  singleInstanceOf,
  vramGbFromMb,
} from '../../../adapters/providers/vast/mapping.ts';

describe('vast mapping: exact price text', () => {
  it.each([
    [0.3466666666, '0.3466666666'],
    [2.4933333, '2.4933333'],
    [17.52, '17.52'],
    [3, '3'],
    [0, '0'],
    [1e-7, '0.0000001'],
    [1.25e-10, '0.000000000125'],
    [1.5e21, '1500000000000000000000'],
    ['2.50', '2.5'],
    ['007.10', '7.1'],
  ])('%s -> %s', (wire, text) => {
    expect(decimalText(wire)).toBe(text);
  });

  it.each([[-0.5], [Number.NaN], [Number.POSITIVE_INFINITY], ['1e-7'], ['abc'], [null], [undefined], [true]])('refuses %s', (wire) => {
    expect(decimalText(wire)).toBeNull();
  });

  it('gives plain decimal text that reads back as the same number', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1e25, noNaN: true, noDefaultInfinity: true }), (value) => {
        const text = decimalText(value)!;
        expect(text).toMatch(/^\d+(\.\d+)?$/);
        expect(Number(text)).toBe(value === 0 ? 0 : value);
      }),
    );
  });
});

describe('vast mapping: units', () => {
  it.each([
    [24564, 24], // RTX 4090 as the driver reports it
    [24576, 24],
    [81559, 80], // H100 80GB
    [81920, 80],
    [143771, 141], // H200
    [95830, 94], // H100 NVL
    [46068, 48], // L40S
    [40960, 40],
    [15360, 16], // T4
    [11264, 11],
    [12288, 12],
    [32607, 32],
    [49140, 48],
    [30000, 29], // no marketed size near: plain rounding
  ])('gpu_ram %i MB -> %i GB', (mb, gb) => {
    expect(vramGbFromMb(mb)).toBe(gb);
  });

  it.each([
    ['Oregon, US', 'US', 'Oregon'],
    ['Tokyo, JP', 'JP', 'Tokyo'],
    ['London, UK', 'GB', 'London'],
    ['Sao Paulo, State of Sao Paulo, BR', 'BR', 'Sao Paulo, State of Sao Paulo'],
    ['us', 'US', null],
    ['Brazil', null, 'Brazil'],
    ['', null, null],
    [null, null, null],
  ])('geolocation %j -> %j / %j', (geolocation, country, region) => {
    expect(parseGeolocation(geolocation)).toEqual({ country, region });
  });

  it('drops a wire offer that lacks what an offer needs instead of failing the list', () => {
    expect(offerFromWire({ id: 1, num_gpus: 1, gpu_name: 'RTX 4090', gpu_ram: 24564 }, 32)).toBeNull();
    expect(offerFromWire({ id: 1, num_gpus: 0, gpu_name: 'RTX 4090', gpu_ram: 24564, dph_total: 0.4 }, 32)).toBeNull();
    expect(offerFromWire({ id: 1, num_gpus: 1, gpu_name: 'RTX 4090', gpu_ram: 24564, dph_total: -1 }, 32)).toBeNull();
    expect(offerFromWire({ id: 1, num_gpus: 1, gpu_name: 'RTX 4090', gpu_ram: 24564, dph_total: 0.4 }, 32)).toMatchObject({
      id: 'vast:1',
      priceUsdPerHour: '0.4',
      priceVerified: false,
      cpus: 0,
      ramGb: 0,
      country: null,
      downloadMbps: null,
      ports: null,
    });
  });
});

describe('vast mapping: instances', () => {
  it.each([
    [[['CP_INSTANCE_ID', 'ins_a'], ['FOO', 'x']], 'ins_a'],
    [{ CP_INSTANCE_ID: 'ins_b', '-p 22:22': '1' }, 'ins_b'],
    ['-e FOO=1 -e CP_INSTANCE_ID=ins_c -p 22:22', 'ins_c'],
    ['-p 22:22 -e "CP_INSTANCE_ID=ins_d"', 'ins_d'],
    ['-e OTHER_CP_INSTANCE_ID=ins_e', null],
    [{ FOO: 'bar' }, null],
    [null, null],
  ])('reads our id from env %j', (env, label) => {
    expect(labelFromEnv(env)).toBe(label);
  });

  it.each([
    [{ actual_status: null }, 'provisioning'],
    [{ actual_status: 'loading', intended_status: 'running' }, 'provisioning'],
    [{ actual_status: 'created', status_msg: 'pulling' }, 'provisioning'],
    [{ actual_status: 'created', status_msg: 'OCI runtime create failed: no such file' }, 'failed'],
    [{ actual_status: 'running', intended_status: 'running', cur_state: 'running' }, 'running'],
    [{ actual_status: 'running', intended_status: 'stopped', cur_state: 'stopped', next_state: 'stopped' }, 'stopped'],
    [{ actual_status: 'exited', intended_status: 'stopped' }, 'stopped'],
    [{ actual_status: 'exited', intended_status: 'running' }, 'unknown'],
    [{ actual_status: 'offline' }, 'unknown'],
    [{ actual_status: 'unknown' }, 'unknown'],
    // interruptible: stopped by Vast (we never stop one) is outbid
    [{ is_bid: true, actual_status: 'exited', intended_status: 'stopped', cur_state: 'stopped', next_state: 'stopped' }, 'preempted'],
    [{ is_bid: true, actual_status: 'exited', intended_status: 'stopped' }, 'preempted'],
    [{ is_bid: true, actual_status: 'running', intended_status: 'running', cur_state: 'running' }, 'running'],
    [{ is_bid: true, actual_status: null }, 'provisioning'],
    [{ is_bid: false, actual_status: 'exited', intended_status: 'stopped', cur_state: 'stopped', next_state: 'stopped' }, 'stopped'],
  ] as const)('%j -> %s', (wire, status) => {
    expect(machineStatus(wire)).toBe(status);
  });

  it('takes the single object under the plural key, null as gone, and an array by id', () => {
    expect(singleInstanceOf({ instances: { id: 5 } }, '5')).toEqual({ id: 5 });
    expect(singleInstanceOf({ instances: null }, '5')).toBeNull();
    expect(singleInstanceOf({}, '5')).toBeNull();
    expect(singleInstanceOf({ instances: [{ id: 4 }, { id: 5, label: 'x' }] }, '5')).toEqual({ id: 5, label: 'x' });
  });

  it('prefers direct SSH and the wire label, and keeps the current price exact', () => {
    expect(
      machineFromWire({
        id: 42,
        label: 'ins_zz',
        actual_status: 'running',
        public_ipaddr: '198.51.100.7\n',
        ports: { '22/tcp': [{ HostIp: '0.0.0.0', HostPort: '40022' }] },
        ssh_host: 'ssh4.vast.ai',
        ssh_port: 12345,
        dph_total: 0.3466666666,
        extra_env: [['CP_INSTANCE_ID', 'ins_other']],
      }),
    ).toEqual({ machineId: '42', label: 'ins_zz', status: 'running', sshHost: '198.51.100.7', sshPort: 40022, priceUsdPerHour: '0.3466666666' });
  });
});
