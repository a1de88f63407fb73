import type { MachineRecord, OfferState, SandboxStore, VolumeRecord } from './store.ts';

/**
 * The sandbox standing alone (catalog tests, benchmarks, a provider built without a database): state in
 * this process, gone when it ends. A control plane never uses it; it gives the sandbox its database.
 */
export class MemorySandboxStore implements SandboxStore {
  private readonly machines = new Map<string, MachineRecord>();
  private readonly offers = new Map<string, OfferState>();
  private readonly volumes = new Map<string, VolumeRecord>();
  /** Machine ids carry the start time, so ids from an earlier run of the process are never reused. */
  private readonly idPrefix: string;
  private serial = 0;
  private volumeSerial = 0;

  constructor(startedAt: number) {
    this.idPrefix = `sbx-${Math.max(0, Math.trunc(startedAt)).toString(36)}`;
  }

  async offerStates(): Promise<Map<string, OfferState>> {
    return new Map([...this.offers].map(([id, state]) => [id, { ...state }]));
  }

  async offerState(offerId: string): Promise<OfferState | null> {
    const state = this.offers.get(offerId);
    return state ? { ...state } : null;
  }

  async setWithdrawn(offerId: string, withdrawn: boolean): Promise<void> {
    this.offer(offerId).withdrawn = withdrawn;
  }

  async setPrice(offerId: string, priceUsdPerHour: string): Promise<void> {
    this.offer(offerId).priceUsdPerHour = priceUsdPerHour;
  }

  async setSpotPrice(offerId: string, spotPriceUsdPerHour: string | null): Promise<void> {
    this.offer(offerId).spotPriceUsdPerHour = spotPriceUsdPerHour;
  }

  async nextMachine(): Promise<{ machineId: string; serial: number }> {
    const serial = ++this.serial;
    return { machineId: `${this.idPrefix}-${serial}`, serial };
  }

  async addMachine(record: MachineRecord, capacity: number | null): Promise<boolean> {
    if (capacity !== null) {
      const offer = this.offer(record.offerId);
      if (offer.withdrawn || offer.taken >= capacity) return false;
      offer.taken++;
    }
    this.machines.set(record.machineId, copy(record));
    return true;
  }

  async machine(machineId: string): Promise<MachineRecord | null> {
    const record = this.machines.get(machineId);
    return record ? copy(record) : null;
  }

  async liveMachines(forgetBefore: number): Promise<MachineRecord[]> {
    const live: MachineRecord[] = [];
    for (const record of [...this.machines.values()]) {
      if (record.terminatedAt === null) live.push(copy(record));
      else if (record.terminatedAt <= forgetBefore) this.machines.delete(record.machineId);
    }
    return live;
  }

  async setRebootUntil(machineId: string, until: number): Promise<void> {
    const record = this.machines.get(machineId);
    if (record && record.terminatedAt === null) record.rebootUntil = until;
  }

  async liveSpotMachines(offerId: string): Promise<MachineRecord[]> {
    return [...this.machines.values()]
      .filter((record) => record.offerId === offerId && record.terminatedAt === null && record.spotBidUnits !== null)
      .sort((a, b) => a.serial - b.serial)
      .map(copy);
  }

  async reschedulePreemption(machineId: string, at: number | null, now: number): Promise<boolean> {
    const record = this.machines.get(machineId);
    if (!record || record.terminatedAt !== null || record.spotBidUnits === null) return false;
    if (record.preemptAt !== null && record.preemptAt <= now) return false;
    record.preemptAt = at;
    return true;
  }

  async reclaim(machineId: string, now: number): Promise<boolean> {
    const record = this.machines.get(machineId);
    if (!record || record.terminatedAt !== null || (record.preemptAt !== null && record.preemptAt <= now)) return false;
    record.preemptAt = now;
    return true;
  }

  async terminate(machineId: string, at: number): Promise<void> {
    const record = this.machines.get(machineId);
    if (!record || record.terminatedAt !== null) return;
    record.terminatedAt = at;
    this.release(record);
  }

  async remove(machineId: string): Promise<void> {
    const record = this.machines.get(machineId);
    if (!record) return;
    this.machines.delete(machineId);
    if (record.terminatedAt === null) this.release(record);
  }

  async nextVolumeId(): Promise<string> {
    return `${this.idPrefix.replace('sbx-', 'sbv-')}-${++this.volumeSerial}`;
  }

  async addVolume(record: VolumeRecord): Promise<void> {
    this.volumes.set(record.volumeId, { ...record });
  }

  async volume(volumeId: string): Promise<VolumeRecord | null> {
    const record = this.volumes.get(volumeId);
    return record ? { ...record } : null;
  }

  async allVolumes(): Promise<VolumeRecord[]> {
    return [...this.volumes.values()].sort((a, b) => a.createdAt - b.createdAt).map((record) => ({ ...record }));
  }

  async volumeInUse(volumeId: string): Promise<boolean> {
    for (const machine of this.machines.values()) {
      if (machine.terminatedAt === null && machine.options.volumeIds.includes(volumeId)) return true;
    }
    return false;
  }

  async deleteVolume(volumeId: string): Promise<'deleted' | 'gone' | 'in_use'> {
    if (!this.volumes.has(volumeId)) return 'gone';
    if (await this.volumeInUse(volumeId)) return 'in_use';
    this.volumes.delete(volumeId);
    return 'deleted';
  }

  private release(record: MachineRecord): void {
    if (!record.holdsCapacity) return;
    const offer = this.offer(record.offerId);
    offer.taken = Math.max(0, offer.taken - 1);
  }

  private offer(offerId: string): OfferState {
    let state = this.offers.get(offerId);
    if (!state) this.offers.set(offerId, (state = { taken: 0, withdrawn: false, priceUsdPerHour: null, spotPriceUsdPerHour: null }));
    return state;
  }
}

/** A record no caller can change behind the store's back: its options hold arrays and an object. */
const copy = (record: MachineRecord): MachineRecord => ({
  ...record,
  options: {
    ...record.options,
    sshPublicKeys: [...record.options.sshPublicKeys],
    env: { ...record.options.env },
    ports: [...record.options.ports],
    volumeIds: [...record.options.volumeIds],
  },
});
