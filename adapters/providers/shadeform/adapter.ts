import type { Offer } from '../../../core/market/offer.ts';
import type { StandardFilter } from '../../../core/market/search-filter.ts';
import {
  ProviderFailure,
  type CreateMachineRequest,
  type Machine,
  type MachineOption,
  type Provider,
  type Rebootable,
  type SpotMachineRequest,
  type SpotMarket,
  type UpstreamVolume,
  type VolumeHost,
  type VolumeOffer,
} from '../../../core/ports/providers.ts';
import { optionValuesProblem, unsupportedOptions } from '../shared/machine-options.ts';
import { liveSpotBid } from '../shared/spot-bid.ts';
import { upstreamFailure, type FailureReading, type Operation } from '../shared/upstream-failure.ts';
import { ShadeformApiError, type ShadeformClient } from './client.ts';
import {
  createBody,
  createdSchema,
  EXTRA_FILTER_KEYS,
  instanceListSchema,
  instanceSchema,
  instanceTypeSchema,
  instanceTypesSchema,
  KEY_PREFIX,
  keyMaterial,
  labelOf,
  launchedMachine,
  parseOfferId,
  PROVIDER,
  sshKeyListSchema,
  toMachine,
  toOffers,
  toVolume,
  volumeListSchema,
  volumePlaces,
  volumeSchema,
  volumeTypesSchema,
  type OfferContext,
  type ShadeformInstance,
  type ShadeformInstanceType,
  type ShadeformVolume,
} from './mapping.ts';

const FAILURES: FailureReading<ShadeformApiError> = {
  provider: PROVIDER,
  apiError: ShadeformApiError,
  describe: (error) => (error.status === 401 || error.status === 403 ? 'API key refused: check SHADEFORM_API_KEY' : `HTTP ${error.status}: ${error.message}`),
};

export const toFailure = (operation: Operation, what: string, error: unknown): ProviderFailure => upstreamFailure(FAILURES, operation, what, error);

const isGone = (error: unknown): boolean => error instanceof ShadeformApiError && error.status === 404;

/**
 * Shadeform resells other clouds' machines: its offers name the cloud behind each (`underlyingCloud`), and the clouds
 * this control plane reaches directly are left out, so one machine is not listed twice. A create is asynchronous
 * (pending until active); each machine states its own SSH user and port. One SSH key by id, the others and a startup
 * script through a launch script; one volume of the machine's cloud and region; restart; spot where its clouds sell
 * it (the bid is a ceiling the adapter keeps). No container options (a launch is a script or a container, not both).
 */
export class ShadeformProvider implements Provider, Rebootable, VolumeHost, SpotMarket {
  readonly name = PROVIDER;
  readonly machineOptions: readonly MachineOption[] = ['ssh_keys', 'startup_script', 'volumes'];
  readonly extraFilterKeys: readonly string[] = EXTRA_FILTER_KEYS;
  readonly unfilterable: readonly StandardFilter[] = ['min_download_mbps', 'min_ports'];
  private readonly client: ShadeformClient;
  private readonly context: OfferContext;

  constructor(client: ShadeformClient, context: OfferContext) {
    this.client = client;
    this.context = context;
  }

  async listOffers(signal?: AbortSignal): Promise<Offer[]> {
    try {
      const { instance_types: raw } = instanceTypesSchema.parse(await this.client.call('GET', '/instances/types', { idempotent: true, signal }));
      const types: ShadeformInstanceType[] = raw.flatMap((item) => {
        const parsed = instanceTypeSchema.safeParse(item);
        return parsed.success ? [parsed.data] : [];
      });
      return toOffers(types, this.context);
    } catch (error) {
      throw toFailure('read', 'list instance types', error);
    }
  }

  isOfferId(offerId: string): boolean {
    return parseOfferId(offerId) !== null;
  }

  async getOffer(offerId: string, signal?: AbortSignal): Promise<Offer | null> {
    if (!this.isOfferId(offerId)) return null;
    return (await this.listOffers(signal)).find((offer) => offer.id === `${PROVIDER}:${offerId}`) ?? null;
  }

  createMachine(request: CreateMachineRequest): Promise<Machine> {
    return this.launch(request, null);
  }

  /** Shadeform's spot price is its own, not an auction: the bid is a ceiling this adapter keeps (shared/spot-bid.ts). */
  async createSpotMachine(request: SpotMachineRequest): Promise<Machine> {
    return this.launch(request, await liveSpotBid(PROVIDER, request, () => this.getOffer(request.offerId), (error) => toFailure('read', 'check the spot price', error)));
  }

  private async launch(request: CreateMachineRequest, bid: string | null): Promise<Machine> {
    const where = parseOfferId(request.offerId);
    if (!where) throw new ProviderFailure(PROVIDER, 'rejected', `no such offer: ${request.offerId}`);
    const unsupported = unsupportedOptions(request, this.machineOptions);
    if (unsupported.length > 0) throw new ProviderFailure(PROVIDER, 'rejected', `Shadeform cannot carry out ${unsupported.join(', ')}`);
    const problem = optionValuesProblem(request);
    if (problem) throw new ProviderFailure(PROVIDER, 'rejected', problem);
    if (this.context.excluded.has(this.context.providerNamed(where.cloud))) {
      throw new ProviderFailure(PROVIDER, 'rejected', `${where.cloud} is reached directly here, not through Shadeform`);
    }
    await this.checkVolumes(request.volumeIds, where);
    const [firstKey, ...extraKeys] = request.sshPublicKeys;
    const sshKeyId = firstKey === undefined ? null : await this.sshKeyIdFor(firstKey, request.label);
    let id: string;
    try {
      const data = await this.client.call('POST', '/instances/create', {
        idempotent: false,
        body: createBody({ ...where, label: request.label, sshKeyId, extraKeys, startupScript: request.startupScript, volumeIds: request.volumeIds, bid }),
      });
      id = createdSchema.parse(data).id;
    } catch (error) {
      throw toFailure('create', 'create instance', error);
    }
    // asynchronous: the instance is pending until its cloud has made it; read it once, else what we know
    try {
      const machine = await this.getMachine(id);
      if (machine) return machine;
    } catch {
      // what we know
    }
    return launchedMachine(id, request.label);
  }

  /** Shadeform mounts one volume, of the machine's own cloud and region, not mounted elsewhere. */
  private async checkVolumes(volumeIds: readonly string[], where: { cloud: string; region: string }): Promise<void> {
    if (volumeIds.length > 1) throw new ProviderFailure(PROVIDER, 'rejected', 'Shadeform mounts one volume on a machine');
    for (const volumeId of volumeIds) {
      const volume = await this.volume(volumeId);
      if (!volume) throw new ProviderFailure(PROVIDER, 'rejected', `create instance: no volume ${volumeId}`);
      if (volume.cloud !== where.cloud || volume.region !== where.region) {
        throw new ProviderFailure(PROVIDER, 'rejected', `create instance: volume ${volumeId} is on ${volume.cloud} in ${volume.region}, the offer on ${where.cloud} in ${where.region}`);
      }
      if (volume.mounted_by) throw new ProviderFailure(PROVIDER, 'rejected', `create instance: volume ${volumeId} is mounted by instance ${volume.mounted_by}`);
    }
  }

  private async instance(machineId: string): Promise<ShadeformInstance | null> {
    try {
      return instanceSchema.parse(await this.client.call('GET', `/instances/${encodeURIComponent(machineId)}/info`, { idempotent: true }));
    } catch (error) {
      if (isGone(error)) return null;
      throw toFailure('read', 'get instance', error);
    }
  }

  async getMachine(machineId: string): Promise<Machine | null> {
    const instance = await this.instance(machineId);
    return instance && toMachine(instance);
  }

  async listMachines(): Promise<Machine[]> {
    try {
      const { instances } = instanceListSchema.parse(await this.client.call('GET', '/instances', { idempotent: true }));
      return instances.filter((i) => labelOf(i) !== null).map(toMachine);
    } catch (error) {
      throw toFailure('read', 'list instances', error);
    }
  }

  async terminateMachine(machineId: string): Promise<void> {
    try {
      await this.client.call('POST', `/instances/${encodeURIComponent(machineId)}/delete`, { idempotent: true });
    } catch (error) {
      if (isGone(error)) return;
      // a second delete of one already deleting or deleted: done
      const machine = await this.getMachine(machineId).catch(() => undefined);
      if (machine === null || machine?.status === 'terminated' || machine?.status === 'preempted') return;
      throw toFailure('action', 'delete instance', error);
    }
  }

  async rebootMachine(machineId: string): Promise<void> {
    try {
      await this.client.call('POST', `/instances/${encodeURIComponent(machineId)}/restart`, { idempotent: false });
    } catch (error) {
      throw toFailure('action', 'restart instance', error);
    }
  }

  // ---- volumes ----

  private async places(): Promise<Map<string, { cloud: string; priceUsdPerGbMonth: string }>> {
    try {
      const { volume_types: types } = volumeTypesSchema.parse(await this.client.call('GET', '/volumes/types', { idempotent: true }));
      return volumePlaces(types, this.context);
    } catch (error) {
      throw toFailure('read', 'list volume types', error);
    }
  }

  async volumeOffers(): Promise<VolumeOffer[]> {
    return [...(await this.places())].map(([region, place]) => ({ region, priceUsdPerGbMonth: place.priceUsdPerGbMonth }));
  }

  /** Our volume id is its name (a volume has no tags); made on the cloud that offers the region (volumePlaces). */
  async createVolume(request: { label: string; name: string; sizeGb: number; region: string }): Promise<UpstreamVolume> {
    const place = (await this.places()).get(request.region);
    if (!place) throw new ProviderFailure(PROVIDER, 'rejected', `create volume: Shadeform makes no volumes in ${request.region}`);
    let volumeId: string;
    try {
      const data = await this.client.call('POST', '/volumes/create', {
        idempotent: false,
        body: { cloud: place.cloud, region: request.region, size_in_gb: request.sizeGb, name: request.label },
      });
      volumeId = createdSchema.parse(data).id;
    } catch (error) {
      throw toFailure('create', 'create volume', error);
    }
    try {
      const made = await this.getVolume(volumeId);
      if (made) return made;
    } catch {
      // what we know
    }
    return { volumeId, label: request.label, region: request.region, sizeGb: request.sizeGb, status: 'creating' };
  }

  private async volume(volumeId: string): Promise<ShadeformVolume | null> {
    try {
      return volumeSchema.parse(await this.client.call('GET', `/volumes/${encodeURIComponent(volumeId)}/info`, { idempotent: true }));
    } catch (error) {
      if (isGone(error)) return null;
      throw toFailure('read', 'get volume', error);
    }
  }

  async getVolume(volumeId: string): Promise<UpstreamVolume | null> {
    const volume = await this.volume(volumeId);
    return volume && toVolume(volume);
  }

  async listVolumes(): Promise<UpstreamVolume[]> {
    try {
      const { volumes } = volumeListSchema.parse(await this.client.call('GET', '/volumes', { idempotent: true }));
      return volumes.map(toVolume).filter((v) => v.label !== null);
    } catch (error) {
      throw toFailure('read', 'list volumes', error);
    }
  }

  /**
   * Shadeform refuses to delete a volume still mounted. Once its instance is being deleted the refusal passes by
   * itself (deletes are asynchronous): unavailable, tried again later, rather than refused for good.
   */
  async deleteVolume(volumeId: string): Promise<void> {
    try {
      await this.client.call('POST', `/volumes/${encodeURIComponent(volumeId)}/delete`, { idempotent: true });
    } catch (error) {
      if (isGone(error)) return;
      const failure = toFailure('action', `delete volume ${volumeId}`, error);
      if (failure.kind === 'rejected') {
        const mountedBy = (await this.volume(volumeId).catch(() => null))?.mounted_by;
        const instance = mountedBy ? await this.instance(mountedBy).catch(() => undefined) : undefined;
        if (instance === null || instance?.status === 'deleting' || instance?.status === 'deleted') {
          throw new ProviderFailure(PROVIDER, 'unavailable', `delete volume ${volumeId}: its machine ${mountedBy} is still being deleted`, failure.status);
        }
      }
      throw failure;
    }
  }

  /** A key with the same material is reused; else the key is added as "cp-<our id>". */
  private async sshKeyIdFor(publicKey: string, label: string): Promise<string> {
    try {
      const { ssh_keys: keys } = sshKeyListSchema.parse(await this.client.call('GET', '/sshkeys', { idempotent: true }));
      const same = keys.find((key) => keyMaterial(key.public_key) === keyMaterial(publicKey));
      if (same) return same.id;
      return createdSchema.parse(await this.client.call('POST', '/sshkeys/add', { idempotent: false, body: { name: `${KEY_PREFIX}${label}`, public_key: publicKey.trim() } })).id;
    } catch (error) {
      throw toFailure('action', 'add SSH key', error);
    }
  }
}
