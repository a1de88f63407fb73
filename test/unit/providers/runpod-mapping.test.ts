import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decimalText,
  encodeOfferId,
  labelOf,
  multiplyDecimal,
  parseOfferId,
  priceText,
  toMachine,
  createPodBody,
  toOffer,
  type Cloud,
  type GpuTypeWire,
} from '../../../adapters/providers/runpod/mapping.ts';

/** A decimal string as an integer count of 10^-30, for an independent check of the digit math. */
const scaled = (text: string): bigint => {
  const [whole, fraction = ''] = text.split('.');
  return BigInt(whole! + fraction.padEnd(30, '0'));
};

describe('runpod exact decimals', () => {
  it('writes wire floats as their shortest decimal text, spelling out exponents', () => {
    expect(decimalText(0.69)).toBe('0.69');
    expect(decimalText(2.3466666666)).toBe('2.3466666666');
    expect(decimalText(3)).toBe('3');
    expect(decimalText(0)).toBe('0');
    expect(decimalText(1e-7)).toBe('0.0000001');
    expect(decimalText(1.5e-10)).toBe('0.00000000015');
    expect(decimalText(1e21)).toBe('1000000000000000000000');
    expect(decimalText(1.25e21)).toBe('1250000000000000000000');
    expect(decimalText(-0.5)).toBeNull();
    expect(decimalText(Number.NaN)).toBeNull();
    expect(decimalText(Number.POSITIVE_INFINITY)).toBeNull();
  });

  it('accepts numeric strings and refuses anything else as a price', () => {
    expect(priceText('0.4400')).toBe('0.44');
    expect(priceText(' 1.5 ')).toBe('1.5');
    expect(priceText('1e-3')).toBeNull();
    expect(priceText('-1')).toBeNull();
    expect(priceText(null)).toBeNull();
  });

  it('multiplies per-GPU prices by the count on digits, never on floats', () => {
    expect(multiplyDecimal('0.3466666666', 3)).toBe('1.0399999998');
    expect(multiplyDecimal('0.69', 5)).toBe('3.45');
    expect(multiplyDecimal('2.5', 4)).toBe('10');
    expect(multiplyDecimal('0.05', 2)).toBe('0.1');
    expect(multiplyDecimal('0', 8)).toBe('0');
    expect(() => multiplyDecimal('1e-3', 2)).toThrow(RangeError);
  });

  it('agrees with big-integer arithmetic for any decimal and count', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 15n }), fc.integer({ min: 0, max: 12 }), fc.integer({ min: 1, max: 64 }), (units, places, count) => {
        const digits = units.toString().padStart(places + 1, '0');
        const text = places === 0 ? digits : `${digits.slice(0, -places)}.${digits.slice(-places)}`;
        const product = multiplyDecimal(text, count);
        expect(product).toMatch(/^(0|[1-9]\d*)(\.\d*[1-9])?$/);
        expect(scaled(product)).toBe(scaled(text) * BigInt(count));
      }),
    );
  });

  it('reads back every wire float exactly as String() prints it', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1e6, noNaN: true }), (value) => {
        const text = decimalText(value)!;
        expect(text).toMatch(/^\d+(\.\d+)?$/);
        expect(Number(text)).toBe(value);
      }),
    );
  });
});

describe('runpod offer ids', () => {
  it('encode the cloud, the count and the GPU type id readably', () => {
    expect(encodeOfferId({ cloud: 'SECURE', count: 2, gpuTypeId: 'NVIDIA GeForce RTX 4090' })).toBe('secure-2x-NVIDIA_GeForce_RTX_4090');
    expect(parseOfferId('community-8x-NVIDIA_A100-SXM4-80GB')).toEqual({ cloud: 'COMMUNITY', count: 8, gpuTypeId: 'NVIDIA A100-SXM4-80GB' });
    expect(encodeOfferId({ cloud: 'SECURE', count: 1, gpuTypeId: 'odd_name/x' })).toBe('secure-1x-odd%5Fname%2Fx');
  });

  it('parse back to exactly what was encoded, for any GPU type id', () => {
    const key = fc.record({
      cloud: fc.constantFrom<Cloud>('SECURE', 'COMMUNITY'),
      count: fc.integer({ min: 1, max: 64 }),
      gpuTypeId: fc.string({ minLength: 1, unit: 'binary' }),
    });
    fc.assert(
      fc.property(key, (k) => {
        const id = encodeOfferId(k);
        expect(id).toMatch(/^[A-Za-z0-9_.!~*'()%-]+$/);
        expect(parseOfferId(id)).toEqual(k);
      }),
    );
  });

  it('refuse ids that are not ours or not canonical', () => {
    for (const id of ['999999999', 'secure-0x-NVIDIA_A40', 'secure-65x-NVIDIA_A40', 'spot-1x-NVIDIA_A40', 'secure-1x-', 'secure-1x-bad%E0%A4', 'secure-1x-a b', 'secure-01x-NVIDIA_A40']) {
      expect(parseOfferId(id)).toBeNull();
    }
  });
});

describe('runpod wire to ours', () => {
  const gpu: GpuTypeWire = {
    id: 'NVIDIA H100 80GB HBM3',
    name: 'H100 SXM',
    manufacturer: 'NVIDIA',
    memory: 80,
    secure: true,
    community: false,
    price: { secure: 2.69, community: 2.49 },
    maxCount: { secure: 8, community: 8 },
  };

  it('builds an offer only for a cloud and count the type is rented in', () => {
    const offer = toOffer(gpu, { cloud: 'SECURE', count: 4, gpuTypeId: gpu.id }, { minVcpu: 80, minMemory: 500, stockStatus: 'Low' }, 50);
    expect(offer).toMatchObject({
      id: 'runpod:secure-4x-NVIDIA_H100_80GB_HBM3',
      gpuType: 'H100',
      gpuCount: 4,
      vramGb: 80,
      priceUsdPerHour: '10.76',
      cpus: 80,
      ramGb: 500,
      diskGb: 50,
      available: 1,
      country: null,
      attributes: { cloud: 'SECURE', stock: 'LOW' },
    });
    expect(toOffer(gpu, { cloud: 'COMMUNITY', count: 1, gpuTypeId: gpu.id }, null, 50)).toBeNull();
    expect(toOffer(gpu, { cloud: 'SECURE', count: 9, gpuTypeId: gpu.id }, null, 50)).toBeNull();
    expect(toOffer({ ...gpu, price: { secure: 0, community: 0 } }, { cloud: 'SECURE', count: 1, gpuTypeId: gpu.id }, null, 50)).toBeNull();
  });

  it('maps pod status, SSH, cost and label', () => {
    expect(
      toMachine({
        id: 'p1',
        name: 'ins_a',
        status: 'RUNNING',
        cost: 0.88,
        ssh: { direct: null },
        runtime: { ports: [{ private: 8888, public: 40001, ip: '198.51.100.7' }, { private: 22, public: 40002, ip: '198.51.100.7' }] },
      }),
    ).toEqual({ machineId: 'p1', label: 'ins_a', status: 'running', sshHost: '198.51.100.7', sshPort: 40002, priceUsdPerHour: '0.88' });
    expect(toMachine({ id: 'p2', status: 'STARTING' }).status).toBe('provisioning');
    expect(toMachine({ id: 'p3', status: 'TERMINATED' }).status).toBe('terminated');
    expect(toMachine({ id: 'p4', status: 'SOMETHING_NEW' })).toMatchObject({ status: 'unknown', label: null, sshHost: null, priceUsdPerHour: null });
    // a stopped pod is preempted only when it is a spot pod of ours (RunPod interrupts one by stopping it)
    expect(toMachine({ id: 'p5', status: 'EXITED' }).status).toBe('stopped');
    expect(toMachine({ id: 'p6', status: 'EXITED', env: { CP_SPOT_BID_PER_GPU: '0.2' } }).status).toBe('preempted');
    expect(toMachine({ id: 'p7', status: 'RUNNING', env: { CP_SPOT_BID_PER_GPU: '0.2' } }).status).toBe('running');
    const onDemand = createPodBody({
      key: { cloud: 'SECURE', count: 1, gpuTypeId: 'NVIDIA L4' }, label: 'ins_a', image: 'x', diskGb: 10, sshPublicKeys: [],
      env: { CP_SPOT_BID_PER_GPU: '1', KEEP: 'y' }, ports: [], command: null, registryId: null, volume: null,
    });
    expect(onDemand.env).toEqual({ KEEP: 'y', CP_INSTANCE_ID: 'ins_a' });
  });

  it('reads our label from the name first, then from the env var', () => {
    expect(labelOf({ id: 'x', name: 'ins_name', env: { CP_INSTANCE_ID: 'ins_env' } })).toBe('ins_name');
    expect(labelOf({ id: 'x', name: 'renamed', env: { CP_INSTANCE_ID: 'ins_env' } })).toBe('ins_env');
    expect(labelOf({ id: 'x', name: 'my pod', env: { CP_INSTANCE_ID: 'someone-else' } })).toBeNull();
  });
});
