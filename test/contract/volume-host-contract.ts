import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isVolumeHost, type Provider, type VolumeHost } from '../../core/ports/providers.ts';
import { failureOf } from './provider-contract.ts';

/** What a volume host's contract test needs: the adapter over its fake (or the sandbox), and ways to look behind it. */
export interface VolumeHostHarness {
  provider: Provider & VolumeHost;
  /** A region where volumes are made, and machines that can attach them rented (see `attach`). */
  region: string;
  /** The price per GB-month the adapter was configured with: every offer must state it exactly. */
  priceUsdPerGbMonth: string;
  /** Whether getVolume can tell an attached volume from a free one (RunPod's volumes do not say). */
  reportsInUse: boolean;
  /** Rents a machine with the volume attached, through the adapter's own create; answers the machine id. */
  attach(volumeId: string): Promise<string>;
  /** The text the upstream keeps for the volume (its name or tags), where our label must be found. */
  upstreamLabelOf(volumeId: string): Promise<string | null>;
  close(): Promise<void>;
}

const DECIMAL_USD = /^\d+(\.\d+)?$/;

/** The behaviour every volume host must show: the lead's volume service relies on exactly this. */
export function volumeHostContract(name: string, open: () => Promise<VolumeHostHarness>): void {
  describe(`volume host contract: ${name}`, () => {
    let harness: VolumeHostHarness;
    let provider: Provider & VolumeHost;
    let serial = 0;
    const label = () => `vol_contract${Date.now().toString(36)}${serial++}`;

    beforeAll(async () => {
      harness = await open();
      provider = harness.provider;
    });
    afterAll(async () => {
      await harness?.close();
    });

    it('is a volume host, and lists its regions once each with exact decimal prices', async () => {
      expect(isVolumeHost(provider)).toBe(true);
      const offers = await provider.volumeOffers();
      expect(offers.length).toBeGreaterThan(0);
      expect(new Set(offers.map((o) => o.region)).size).toBe(offers.length);
      for (const offer of offers) {
        expect(offer.region.length).toBeGreaterThan(0);
        expect(offer.priceUsdPerGbMonth).toMatch(DECIMAL_USD);
        expect(offer.priceUsdPerGbMonth).toBe(harness.priceUsdPerGbMonth);
      }
      expect(offers.map((o) => o.region)).toContain(harness.region);
    });

    it('creates a volume that carries our label, and reads it back', async () => {
      const ours = label();
      const created = await provider.createVolume({ label: ours, name: 'training data', sizeGb: 20, region: harness.region });
      expect(created.volumeId.length).toBeGreaterThan(0);
      expect(created).toMatchObject({ region: harness.region, sizeGb: 20 });
      expect(['creating', 'available']).toContain(created.status);
      expect(await harness.upstreamLabelOf(created.volumeId)).toContain(ours);

      const fetched = await provider.getVolume(created.volumeId);
      expect(fetched).toMatchObject({ volumeId: created.volumeId, region: harness.region, sizeGb: 20 });
      expect(['creating', 'available']).toContain(fetched!.status);
      await provider.deleteVolume(created.volumeId);
    });

    it('lists the volumes carrying our labels, with their labels, and leaves out the account\'s others', async () => {
      const ours = label();
      const created = await provider.createVolume({ label: ours, name: 'listed', sizeGb: 10, region: harness.region });
      const foreign = await provider.createVolume({ label: `other_${serial++}x`, name: 'not ours', sizeGb: 10, region: harness.region });
      try {
        const listed = await provider.listVolumes();
        expect(listed.find((v) => v.volumeId === created.volumeId)).toMatchObject({ volumeId: created.volumeId, label: ours, region: harness.region, sizeGb: 10 });
        expect(listed.map((v) => v.volumeId)).not.toContain(foreign.volumeId);
        for (const volume of listed) expect(volume.label).toMatch(/^vol_[a-z0-9]+$/);
        expect((await provider.getVolume(created.volumeId))?.label).toBe(ours);
      } finally {
        await provider.deleteVolume(created.volumeId);
        await provider.deleteVolume(foreign.volumeId);
      }
      expect((await provider.listVolumes()).map((v) => v.volumeId)).not.toContain(created.volumeId);
    });

    it('answers null for a volume it does not know', async () => {
      expect(await provider.getVolume('nosuchvolume0000')).toBeNull();
    });

    it('deletes idempotently: a volume already gone counts as deleted', async () => {
      const created = await provider.createVolume({ label: label(), name: 'scratch', sizeGb: 10, region: harness.region });
      await provider.deleteVolume(created.volumeId);
      expect(await provider.getVolume(created.volumeId)).toBeNull();
      await provider.deleteVolume(created.volumeId);
      await provider.deleteVolume('nosuchvolume0000');
    });

    it('refuses to delete a volume attached to a live machine, and deletes it once the machine is gone', async () => {
      const created = await provider.createVolume({ label: label(), name: 'attached', sizeGb: 10, region: harness.region });
      const machineId = await harness.attach(created.volumeId);
      if (harness.reportsInUse) expect((await provider.getVolume(created.volumeId))?.status).toBe('in_use');

      const failure = await failureOf(provider.deleteVolume(created.volumeId));
      expect(failure.kind).toBe('rejected');
      expect(await provider.getVolume(created.volumeId)).not.toBeNull();

      await provider.terminateMachine(machineId);
      await provider.deleteVolume(created.volumeId);
      expect(await provider.getVolume(created.volumeId)).toBeNull();
    });

    it('refuses a volume in a region it does not offer', async () => {
      const failure = await failureOf(provider.createVolume({ label: label(), name: 'nowhere', sizeGb: 10, region: 'nowhere-9' }));
      expect(failure.kind).toBe('rejected');
    });
  });
}
