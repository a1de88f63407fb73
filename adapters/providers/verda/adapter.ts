import type { Offer } from '../../../core/market/offer.ts';
import type { StandardFilter } from '../../../core/market/search-filter.ts';
import {
  ProviderFailure,
  type CreateMachineRequest,
  type Machine,
  type MachineOption,
  type Provider,
  type SpotMachineRequest,
  type SpotMarket,
  type UpstreamVolume,
  type VolumeHost,
  type VolumeOffer,
} from '../../../core/ports/providers.ts';
import { compareDecimal } from '../shared/decimal.ts';
import { optionValuesProblem, unsupportedOptions } from '../shared/machine-options.ts';
import { liveSpotBid } from '../shared/spot-bid.ts';
import { upstreamFailure, type FailureReading, type Operation } from '../shared/upstream-failure.ts';
import { VerdaApiError, type VerdaClient } from './client.ts';
import {
  availabilitySchema,
  bidOf,
  decimalOf,
  deployBody,
  EXTRA_FILTER_KEYS,
  ID_TAG,
  instanceListSchema,
  instanceSchema,
  instanceTypeSchema,
  keyMaterial,
  labelOf,
  launchedMachine,
  locationSchema,
  newIdOf,
  parseOfferId,
  PROVIDER,
  RESOURCE_PREFIX,
  sshKeyListSchema,
  toMachine,
  toOffers,
  toVolume,
  volumeListSchema,
  volumeSchema,
  volumeTypesSchema,
  type VerdaInstance,
  type VerdaInstanceType,
} from './mapping.ts';

const FAILURES: FailureReading<VerdaApiError> = {
  provider: PROVIDER,
  apiError: VerdaApiError,
  describe: (error) => (error.status === 401 ? 'credentials refused: check VERDA_CLIENT_ID and VERDA_CLIENT_SECRET' : `${error.code ?? `HTTP ${error.status}`}: ${error.message}`),
  // Verda documents a 503 on a deploy as "no capacity in the selected location": nothing was made
  nothingMade: (error) => error.status < 500 || (error.status === 503 && error.code === 'service_unavailable'),
};

export const toFailure = (operation: Operation, what: string, error: unknown): ProviderFailure => upstreamFailure(FAILURES, operation, what, error);

const isGone = (error: unknown): boolean => error instanceof VerdaApiError && error.status === 404;

export interface VerdaAdapterOptions {
  /** The OS image a machine boots (Verda's image type, from GET /images). */
  image: string;
  /** The volume type made for a volume (NVMe_Shared: mountable by several machines of a location). */
  volumeType: string;
}

/**
 * Verda (formerly DataCrunch) rents virtual machines: a create carries SSH keys (registered as resources of their
 * own, by id), a startup script (likewise) and existing volumes; no container image, command, env or ports.
 * Spot machines run at Verda's spot price; the bid is a ceiling the adapter keeps (docs/decisions.md).
 */
export class VerdaProvider implements Provider, VolumeHost, SpotMarket {
  readonly name = PROVIDER;
  readonly machineOptions: readonly MachineOption[] = ['ssh_keys', 'startup_script', 'volumes'];
  readonly extraFilterKeys: readonly string[] = EXTRA_FILTER_KEYS;
  readonly unfilterable: readonly StandardFilter[] = ['min_download_mbps', 'min_ports'];
  private readonly client: VerdaClient;
  private readonly options: VerdaAdapterOptions;

  constructor(client: VerdaClient, options: VerdaAdapterOptions) {
    this.client = client;
    this.options = options;
  }

  private async read(path: string, what: string, signal?: AbortSignal): Promise<unknown> {
    try {
      return (await this.client.call('GET', path, { idempotent: true, signal })).body;
    } catch (error) {
      throw toFailure('read', what, error);
    }
  }

  async listOffers(signal?: AbortSignal): Promise<Offer[]> {
    const [types, onDemand, spot, locations] = await Promise.all([
      this.read('/instance-types?currency=usd', 'list instance types', signal),
      this.read('/instance-availability?is_spot=false', 'list availability', signal),
      this.read('/instance-availability?is_spot=true', 'list spot availability', signal),
      this.read('/locations', 'list locations', signal),
    ]);
    try {
      const byLocation = (data: unknown) => new Map(availabilitySchema.parse(data).map((a) => [a.location_code, new Set(a.availabilities)]));
      const parsed = (Array.isArray(types) ? types : []).flatMap((t) => {
        const item = instanceTypeSchema.safeParse(t);
        return item.success ? [item.data] : [];
      });
      return toOffers({ types: parsed, onDemand: byLocation(onDemand), spot: byLocation(spot), locations: locationSchema.parse(locations) });
    } catch (error) {
      throw toFailure('read', 'list offers', error);
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
    return this.deploy(request, null);
  }

  /** Verda's spot price is its own, not an auction: the bid is a ceiling this adapter keeps (shared/spot-bid.ts). */
  async createSpotMachine(request: SpotMachineRequest): Promise<Machine> {
    return this.deploy(request, await liveSpotBid(PROVIDER, request, () => this.getOffer(request.offerId), (error) => toFailure('read', 'check the spot price', error)));
  }

  private async deploy(request: CreateMachineRequest, bid: string | null): Promise<Machine> {
    const where = parseOfferId(request.offerId);
    if (!where) throw new ProviderFailure(PROVIDER, 'rejected', `no such offer: ${request.offerId}`);
    const unsupported = unsupportedOptions(request, this.machineOptions);
    if (unsupported.length > 0) throw new ProviderFailure(PROVIDER, 'rejected', `Verda cannot carry out ${unsupported.join(', ')}`);
    const problem = optionValuesProblem(request);
    if (problem) throw new ProviderFailure(PROVIDER, 'rejected', problem);
    await this.checkVolumes(request.volumeIds, where.location);
    const sshKeyIds = await this.sshKeyIds(request.sshPublicKeys, request.label);
    const startupScriptId = request.startupScript === null ? null : await this.addScript(request.label, request.startupScript);

    let machineId: string;
    try {
      const answer = await this.client.call('POST', '/instances', {
        idempotent: false,
        body: deployBody({ ...where, image: this.options.image, label: request.label, name: request.name, sshKeyIds, startupScriptId, volumeIds: request.volumeIds, bid }),
      });
      machineId = newIdOf(answer.body);
    } catch (error) {
      const failure = toFailure('create', 'deploy', error);
      if (failure.kind === 'rejected' && startupScriptId) await this.deleteScript(startupScriptId).catch(() => undefined);
      throw failure;
    }
    // deployed: from here on nothing may throw, or the caller would think nothing exists
    try {
      const machine = await this.getMachine(machineId);
      if (machine) return machine;
    } catch {
      // what we know
    }
    return launchedMachine(machineId, request.label);
  }

  private machineOf(instance: VerdaInstance): Machine {
    const bid = bidOf(instance);
    const price = decimalOf(instance.price_per_hour ?? null);
    return toMachine(instance, bid !== null && price !== null && compareDecimal(price, bid) > 0);
  }

  async getMachine(machineId: string): Promise<Machine | null> {
    try {
      const { body } = await this.client.call('GET', `/instances/${encodeURIComponent(machineId)}`, { idempotent: true });
      return this.machineOf(instanceSchema.parse(body));
    } catch (error) {
      if (isGone(error)) return null;
      throw toFailure('read', 'get instance', error);
    }
  }

  async listMachines(): Promise<Machine[]> {
    return (await this.listInstances()).filter((i) => labelOf(i) !== null).map((i) => this.machineOf(i));
  }

  private async listInstances(): Promise<VerdaInstance[]> {
    try {
      return instanceListSchema.parse((await this.client.call('GET', '/instances', { idempotent: true })).body);
    } catch (error) {
      throw toFailure('read', 'list instances', error);
    }
  }

  /** A delete of an instance Verda no longer knows (404, "Invalid instance id") counts as done. */
  async terminateMachine(machineId: string): Promise<void> {
    let instance: VerdaInstance | null = null;
    try {
      instance = instanceSchema.parse((await this.client.call('GET', `/instances/${encodeURIComponent(machineId)}`, { idempotent: true })).body);
    } catch (error) {
      if (isGone(error)) return;
      throw toFailure('read', 'terminate: read the instance', error);
    }
    try {
      await this.client.call('PUT', '/instances', { idempotent: true, body: { action: 'delete', id: machineId, delete_permanently: true } });
    } catch (error) {
      if (isGone(error) || (error instanceof VerdaApiError && /invalid instance id|discontinued instance/i.test(error.message))) return;
      // refused only until it is up: the caller tries again later (the instance stays terminating for the sweep)
      if (error instanceof VerdaApiError && /provisioning/i.test(error.message)) {
        throw new ProviderFailure(PROVIDER, 'unavailable', `delete instance: ${error.message}`, error.status);
      }
      throw toFailure('action', 'delete instance', error);
    }
    // the startup script this adapter registered for it is of no more use
    if (instance.startup_script_id) await this.deleteOwnScript(instance.startup_script_id).catch(() => undefined);
  }

  // ---- volumes ----

  async volumeOffers(): Promise<VolumeOffer[]> {
    const [types, locations] = await Promise.all([this.read('/volume-types?currency=usd', 'list volume types'), this.read('/locations', 'list locations')]);
    try {
      const price = volumeTypesSchema.parse(types).find((t) => t.type === this.options.volumeType)?.price.price_per_month_per_gb;
      if (price === undefined) return [];
      const text = decimalOf(String(price))!;
      return locationSchema.parse(locations).map((l) => ({ region: l.code, priceUsdPerGbMonth: text }));
    } catch (error) {
      throw toFailure('read', 'list volume types', error);
    }
  }

  async createVolume(request: { label: string; name: string; sizeGb: number; region: string }): Promise<UpstreamVolume> {
    const regions = (await this.volumeOffers()).map((o) => o.region);
    if (!regions.includes(request.region)) throw new ProviderFailure(PROVIDER, 'rejected', `create volume: Verda has no location ${request.region}`);
    let volumeId: string;
    try {
      const answer = await this.client.call('POST', '/volumes', {
        idempotent: false,
        body: { type: this.options.volumeType, location_code: request.region, size: request.sizeGb, name: request.label, tags: [{ key: ID_TAG, value: request.label }] },
      });
      volumeId = newIdOf(answer.body);
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

  async getVolume(volumeId: string): Promise<UpstreamVolume | null> {
    try {
      const { body } = await this.client.call('GET', `/volumes/${encodeURIComponent(volumeId)}`, { idempotent: true });
      return toVolume(volumeSchema.parse(body));
    } catch (error) {
      if (isGone(error)) return null;
      throw toFailure('read', 'get volume', error);
    }
  }

  async listVolumes(): Promise<UpstreamVolume[]> {
    try {
      const volumes = volumeListSchema.parse((await this.client.call('GET', '/volumes', { idempotent: true })).body);
      return volumes.flatMap((v) => toVolume(v) ?? []).filter((v) => v.label !== null);
    } catch (error) {
      throw toFailure('read', 'list volumes', error);
    }
  }

  /** Deleted for good (not to the trash, where it would still be billed); Verda refuses one still attached. */
  async deleteVolume(volumeId: string): Promise<void> {
    try {
      await this.client.call('DELETE', `/volumes/${encodeURIComponent(volumeId)}`, { idempotent: true, body: { is_permanent: true } });
    } catch (error) {
      if (isGone(error)) return;
      throw toFailure('action', `delete volume ${volumeId}`, error);
    }
  }

  private async checkVolumes(volumeIds: readonly string[], location: string): Promise<void> {
    for (const volumeId of volumeIds) {
      const volume = await this.getVolume(volumeId);
      if (!volume) throw new ProviderFailure(PROVIDER, 'rejected', `deploy: no volume ${volumeId}`);
      if (volume.region !== location) throw new ProviderFailure(PROVIDER, 'rejected', `deploy: volume ${volumeId} is in ${volume.region}, the offer in ${location}`);
    }
  }

  // ---- SSH keys and startup scripts: resources of their own, given to a deploy by id ----

  /** Each key's id on the account: one with the same material is reused, else the key is added as "cp-<our id>-<n>". */
  private async sshKeyIds(publicKeys: readonly string[], label: string): Promise<string[]> {
    if (publicKeys.length === 0) return [];
    try {
      const existing = sshKeyListSchema.parse((await this.client.call('GET', '/ssh-keys', { idempotent: true })).body);
      const ids: string[] = [];
      for (const [index, publicKey] of publicKeys.entries()) {
        const same = existing.find((key) => keyMaterial(key.key) === keyMaterial(publicKey));
        if (same) {
          ids.push(same.id);
          continue;
        }
        const answer = await this.client.call('POST', '/ssh-keys', { idempotent: false, body: { name: `${RESOURCE_PREFIX}${label}-${index + 1}`, key: publicKey.trim() } });
        ids.push(newIdOf(answer.body));
      }
      return ids;
    } catch (error) {
      throw toFailure('action', 'register SSH key', error);
    }
  }

  private async addScript(label: string, script: string): Promise<string> {
    try {
      const answer = await this.client.call('POST', '/scripts', { idempotent: false, body: { name: `${RESOURCE_PREFIX}${label}`, script } });
      return newIdOf(answer.body);
    } catch (error) {
      throw toFailure('action', 'register startup script', error);
    }
  }

  private async deleteScript(scriptId: string): Promise<void> {
    try {
      await this.client.call('DELETE', `/scripts/${encodeURIComponent(scriptId)}`, { idempotent: true });
    } catch (error) {
      if (!isGone(error)) throw error;
    }
  }

  /** Only a script this adapter registered (named "cp-ins_…") is deleted with its machine. */
  private async deleteOwnScript(scriptId: string): Promise<void> {
    const { body } = await this.client.call('GET', `/scripts/${encodeURIComponent(scriptId)}`, { idempotent: true });
    const name = (body as { name?: unknown } | undefined)?.name;
    if (typeof name === 'string' && name.startsWith(`${RESOURCE_PREFIX}ins_`)) await this.deleteScript(scriptId);
  }
}

export type { VerdaInstanceType };
