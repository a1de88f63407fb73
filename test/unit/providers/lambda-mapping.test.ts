import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  countryOf,
  instanceSchema,
  keyMaterial,
  labelOf,
  parseGpuDescription,
  parseOfferId,
  toOffers,
} from '../../../adapters/providers/lambda/mapping.ts';

const typeItem = (cents: number, description: string | undefined, gpuDescription: string, gpus = 1) => ({
  instance_type: {
    name: 'gpu_test',
    ...(description === undefined ? {} : { description }),
    gpu_description: gpuDescription,
    price_cents_per_hour: cents,
    specs: { vcpus: 8, memory_gib: 64, storage_gib: 512, gpus },
  },
  regions_with_capacity_available: [{ name: 'us-east-1', description: 'Virginia, USA' }],
});

describe('lambda mapping', () => {
  it('parses count, model, VRAM and form factor out of Lambda descriptions', () => {
    expect(parseGpuDescription('8x H100 (80 GB SXM5)')).toEqual({ count: 8, model: 'H100', vramGb: 80, form: 'SXM5' });
    expect(parseGpuDescription('1x GH200 (96 GB)')).toEqual({ count: 1, model: 'GH200', vramGb: 96, form: '' });
    expect(parseGpuDescription('8x Tesla V100 (16 GB)')).toEqual({ count: 8, model: 'V100', vramGb: 16, form: '' });
    expect(parseGpuDescription('1x RTX 6000 (24 GB)')).toMatchObject({ model: 'RTX 6000', vramGb: 24 });
    expect(parseGpuDescription('A100 (40 GB SXM4)')).toEqual({ count: null, model: 'A100', vramGb: 40, form: 'SXM4' });
    expect(parseGpuDescription('4x vCPU general purpose')).toBeNull();
  });

  it('falls back to gpu_description when description is missing or unreadable', () => {
    const [offer] = toOffers({ gpu_test: typeItem(199, undefined, 'L40S (48 GB PCIe)', 2) });
    expect(offer).toMatchObject({ gpuType: 'L40S', vramGb: 48, gpuCount: 2, priceUsdPerHour: '1.99' });
  });

  it('turns integer cents into the exact decimal dollar string, for any amount', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), (cents) => {
        const [offer] = toOffers({ gpu_test: typeItem(cents, '1x H100 (80 GB PCIe)', 'H100 (80 GB PCIe)') });
        const text = offer!.priceUsdPerHour;
        expect(text).toMatch(/^\d+\.\d{2}$/);
        expect(Number(text.replace('.', ''))).toBe(cents);
      }),
    );
  });

  it('skips a malformed item (non-integer cents) and keeps the rest', () => {
    const offers = toOffers({
      bad: typeItem(12.5, '1x A10 (24 GB PCIe)', 'A10 (24 GB PCIe)'),
      good: typeItem(75, '1x A10 (24 GB PCIe)', 'A10 (24 GB PCIe)'),
    });
    expect(offers.map((o) => o.priceUsdPerHour)).toEqual(['0.75']);
  });

  it('rejects an array where the map keyed by type name belongs', () => {
    expect(() => toOffers([typeItem(75, '1x A10 (24 GB PCIe)', 'A10 (24 GB PCIe)')])).toThrow();
  });

  it('finds a country from the region description or a us- name', () => {
    expect(countryOf('europe-central-1', 'Frankfurt, Germany')).toBe('DE');
    expect(countryOf('us-south-1', undefined)).toBe('US');
    expect(countryOf('asia-northeast-1', 'Tokyo, Japan')).toBe('JP');
    expect(countryOf('mars-1', 'Olympus Mons')).toBeNull();
  });

  it('parses offer ids as type@region only', () => {
    expect(parseOfferId('gpu_8x_h100_sxm5@us-west-2')).toEqual({ typeName: 'gpu_8x_h100_sxm5', regionName: 'us-west-2' });
    expect(parseOfferId('999999999')).toBeNull();
    expect(parseOfferId('gpu_1x_a10@us-east-1@x')).toBeNull();
  });

  it('reads our label from the cp-id tag, then the name, and ignores foreign ones', () => {
    const base = { id: 'a'.repeat(32), status: 'active', ssh_key_names: [] };
    expect(labelOf(instanceSchema.parse({ ...base, name: 'x', tags: [{ key: 'cp-id', value: 'ins_tag' }] }))).toBe('ins_tag');
    expect(labelOf(instanceSchema.parse({ ...base, name: 'ins_name' }))).toBe('ins_name');
    expect(labelOf(instanceSchema.parse({ ...base, name: 'web-server', tags: [{ key: 'cp-id', value: 'other' }] }))).toBeNull();
  });

  it('compares SSH keys by type and body, not comment', () => {
    expect(keyMaterial('ssh-ed25519 AAAA1 bob@a')).toBe(keyMaterial('  ssh-ed25519   AAAA1 other\n'));
    expect(keyMaterial('ssh-ed25519 AAAA1')).not.toBe(keyMaterial('ssh-ed25519 AAAA2'));
  });
});
