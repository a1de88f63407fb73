import type { Offer } from '../../../core/market/offer.ts';
import type { StandardFilter } from '../../../core/market/search-filter.ts';
import {
  ProviderFailure,
  type CreateMachineRequest,
  type Machine,
  type MachineOption,
  type Provider,
  type Rebootable,
  type UpstreamVolume,
  type VolumeHost,
  type VolumeOffer,
} from '../../../core/ports/providers.ts';
import { isVolumeId } from '../../../core/volumes/volume.ts';
import { optionValuesProblem, unsupportedOptions } from '../shared/machine-options.ts';
import { upstreamFailure, type FailureReading, type Operation } from '../shared/upstream-failure.ts';
import { LambdaApiError, type LambdaClient } from './client.ts';
import {
  EXTRA_FILTER_KEYS,
  fileSystemListSchema,
  fileSystemNameFor,
  fileSystemSchema,
  parseFileSystemName,
  PROVIDER,
  regionListSchema,
  SSH_KEY_PREFIX,
  instanceListSchema,
  instanceSchema,
  isOurs,
  keyMaterial,
  launchBody,
  launchSchema,
  launchedMachine,
  parseOfferId,
  sshKeyListSchema,
  sshKeyNameFor,
  sshKeySchema,
  terminateSchema,
  toMachine,
  toOffers,
  type LambdaFileSystem,
  type LambdaInstance,
} from './mapping.ts';

const describeApiError = (error: LambdaApiError): string => {
  if (error.status === 401) return `API key rejected (${error.code ?? 'HTTP 401'}): check the Lambda API key`;
  const code = error.code ?? `HTTP ${error.status}`;
  return `${code}: ${error.message}${error.suggestion ? ` (${error.suggestion})` : ''}`;
};

const FAILURES: FailureReading<LambdaApiError> = { provider: PROVIDER, apiError: LambdaApiError, describe: describeApiError };

export const toFailure = (operation: Operation, what: string, error: unknown): ProviderFailure => upstreamFailure(FAILURES, operation, what, error);

/** Lambda's "already gone" answer: 404 with `global/object-does-not-exist`. */
const isGone = (error: unknown): boolean =>
  error instanceof LambdaApiError && error.status === 404 && error.code === 'global/object-does-not-exist';

const ENDED = new Set(['terminating', 'terminated', 'preempted']);

interface SshKeyChoice {
  name: string;
  /** Set when this call registered the key, so a refused launch can remove it again. */
  registeredId: string | null;
}

export interface LambdaAdapterOptions {
  /** An SSH key already on the account, used when the caller gives no public key. */
  sshKeyName: string | null;
  /** What a filesystem costs, exact decimal USD per GB-month (Lambda's billing page shows $0.20 per GiB used). */
  volumePriceUsdPerGbMonth: string;
}

const GIB = 1024 ** 3;

const toVolume = (fs: LambdaFileSystem): UpstreamVolume => ({
  volumeId: fs.id,
  label: parseFileSystemName(fs.name)?.label ?? null,
  region: fs.region.name,
  // the size asked for rides in the name; a filesystem made elsewhere counts what it holds
  sizeGb: parseFileSystemName(fs.name)?.sizeGb ?? Math.ceil((fs.bytes_used ?? 0) / GIB),
  status: fs.is_in_use ? 'in_use' : 'available',
});

/**
 * Lambda rents VMs, not containers: a create carries SSH keys and filesystems, nothing else (no image, env,
 * ports, command; its cloud-init user data holds only the extra keys).
 */
export class LambdaProvider implements Provider, Rebootable, VolumeHost {
  readonly name = PROVIDER;
  readonly machineOptions: readonly MachineOption[] = ['ssh_keys', 'volumes'];
  readonly extraFilterKeys: readonly string[] = EXTRA_FILTER_KEYS;
  /** Lambda states neither network speed nor open ports. */
  readonly unfilterable: readonly StandardFilter[] = ['min_download_mbps', 'min_ports'];
  private readonly client: LambdaClient;
  private readonly options: LambdaAdapterOptions;

  constructor(client: LambdaClient, options: LambdaAdapterOptions) {
    this.client = client;
    this.options = options;
  }

  async listOffers(signal?: AbortSignal): Promise<Offer[]> {
    try {
      return toOffers(await this.client.call('GET', '/instance-types', { idempotent: true, signal }));
    } catch (error) {
      throw toFailure('read', 'list instance types', error);
    }
  }

  isOfferId(offerId: string): boolean {
    return parseOfferId(offerId) !== null;
  }

  async getOffer(offerId: string, signal?: AbortSignal): Promise<Offer | null> {
    if (!this.isOfferId(offerId)) return null;
    // there is no per-type endpoint: the live check reads the whole (small) catalog
    const offers = await this.listOffers(signal);
    return offers.find((offer) => offer.id === `${PROVIDER}:${offerId}`) ?? null;
  }

  async createMachine(request: CreateMachineRequest): Promise<Machine> {
    const where = parseOfferId(request.offerId);
    if (!where) throw new ProviderFailure(PROVIDER, 'rejected', `no such offer: ${request.offerId}`);
    const unsupported = unsupportedOptions(request, this.machineOptions);
    if (unsupported.length > 0) throw new ProviderFailure(PROVIDER, 'rejected', `Lambda cannot carry out ${unsupported.join(', ')}`);
    const problem = optionValuesProblem(request);
    if (problem) throw new ProviderFailure(PROVIDER, 'rejected', problem);
    const fileSystemNames = await this.fileSystemNames(request.volumeIds, where.regionName);
    const key = await this.chooseSshKey(request);

    let instanceIds: string[];
    try {
      const data = await this.client.call('POST', '/instance-operations/launch', {
        idempotent: false,
        launch: true,
        body: launchBody({
          ...where,
          sshKeyName: key.name,
          extraPublicKeys: request.sshPublicKeys.slice(1),
          fileSystemNames,
          label: request.label,
          name: request.name,
        }),
      });
      instanceIds = launchSchema.parse(data).instance_ids;
    } catch (error) {
      const failure = toFailure('create', 'launch', error);
      // only a definite refusal lets us drop the key; after an ambiguous launch an instance may use it
      if (failure.kind === 'rejected' && key.registeredId) await this.deleteSshKey(key.registeredId).catch(() => undefined);
      throw failure;
    }
    const machineId = instanceIds[0];
    if (!machineId) throw new ProviderFailure(PROVIDER, 'ambiguous', 'launch answered 200 without an instance id');

    // The launch succeeded: from here on nothing may throw, or the caller would think nothing exists.
    try {
      const machine = await this.getMachine(machineId);
      if (machine) return machine;
    } catch {
      // fall back to what we know
    }
    return launchedMachine(machineId, request.label);
  }

  async getMachine(machineId: string): Promise<Machine | null> {
    try {
      const data = await this.client.call('GET', `/instances/${encodeURIComponent(machineId)}`, { idempotent: true });
      return toMachine(instanceSchema.parse(data));
    } catch (error) {
      if (isGone(error)) return null;
      throw toFailure('read', 'get instance', error);
    }
  }

  async listMachines(): Promise<Machine[]> {
    return (await this.listInstances()).filter(isOurs).map(toMachine);
  }

  async terminateMachine(machineId: string): Promise<void> {
    let data: unknown;
    try {
      data = await this.client.call('POST', '/instance-operations/terminate', {
        idempotent: true,
        body: { instance_ids: [machineId] },
      });
    } catch (error) {
      if (isGone(error)) return;
      throw toFailure('action', 'terminate', error);
    }
    const parsed = terminateSchema.safeParse(data);
    if (parsed.success) await this.releaseSshKeys(parsed.data.terminated_instances).catch(() => undefined);
  }

  async rebootMachine(machineId: string): Promise<void> {
    try {
      await this.client.call('POST', '/instance-operations/restart', {
        idempotent: false,
        body: { instance_ids: [machineId] },
      });
    } catch (error) {
      throw toFailure('action', 'restart', error);
    }
  }

  async volumeOffers(): Promise<VolumeOffer[]> {
    try {
      const regions = regionListSchema.parse(await this.client.call('GET', '/regions', { idempotent: true }));
      return regions.map((r) => ({ region: r.name, priceUsdPerGbMonth: this.options.volumePriceUsdPerGbMonth }));
    } catch (error) {
      throw toFailure('read', 'list regions', error);
    }
  }

  async createVolume(request: { label: string; name: string; sizeGb: number; region: string }): Promise<UpstreamVolume> {
    const name = fileSystemNameFor(request.label, request.sizeGb);
    if (!name) throw new ProviderFailure(PROVIDER, 'rejected', `create filesystem: "${request.label}" cannot be a Lambda filesystem name`);
    try {
      const data = await this.client.call('POST', '/filesystems', { idempotent: false, body: { name, region: request.region } });
      return toVolume(fileSystemSchema.parse(data));
    } catch (error) {
      throw toFailure('create', `create filesystem ${name}`, error);
    }
  }

  async getVolume(volumeId: string): Promise<UpstreamVolume | null> {
    const found = (await this.listFileSystems()).find((fs) => fs.id === volumeId);
    return found ? toVolume(found) : null;
  }

  /** GET /file-systems answers every filesystem of the account; ours are named after our label ("vol-abc-20gb"). */
  async listVolumes(): Promise<UpstreamVolume[]> {
    return (await this.listFileSystems()).map(toVolume).filter((volume) => isVolumeId(volume.label));
  }

  /** Lambda refuses (filesystems/filesystem-in-use) while an instance has it mounted: a refusal. */
  async deleteVolume(volumeId: string): Promise<void> {
    try {
      await this.client.call('DELETE', `/filesystems/${encodeURIComponent(volumeId)}`, { idempotent: true });
    } catch (error) {
      if (isGone(error)) return;
      throw toFailure('action', `delete filesystem ${volumeId}`, error);
    }
  }

  private async listFileSystems(): Promise<LambdaFileSystem[]> {
    try {
      return fileSystemListSchema.parse(await this.client.call('GET', '/file-systems', { idempotent: true }));
    } catch (error) {
      throw toFailure('read', 'list filesystems', error);
    }
  }

  /** Launch takes filesystems by name: ours are known by id, so they are looked up (and checked) first. */
  private async fileSystemNames(volumeIds: readonly string[], regionName: string): Promise<string[]> {
    if (volumeIds.length === 0) return [];
    const all = await this.listFileSystems();
    return volumeIds.map((volumeId) => {
      const fs = all.find((f) => f.id === volumeId);
      if (!fs) throw new ProviderFailure(PROVIDER, 'rejected', `launch: no filesystem ${volumeId}`);
      if (fs.region.name !== regionName) {
        throw new ProviderFailure(PROVIDER, 'rejected', `launch: filesystem ${volumeId} is in ${fs.region.name}, the offer in ${regionName}`);
      }
      return fs.name;
    });
  }

  private async listInstances(): Promise<LambdaInstance[]> {
    try {
      return instanceListSchema.parse(await this.client.call('GET', '/instances', { idempotent: true }));
    } catch (error) {
      throw toFailure('read', 'list instances', error);
    }
  }

  /**
   * Lambda launches only with exactly one SSH key already registered on the account. A key with the
   * same material is reused whatever its name (as SkyPilot and dstack do); otherwise the caller's key
   * is registered as "cp-<our id>" and removed again when the last instance using it is terminated.
   */
  private async chooseSshKey(request: CreateMachineRequest): Promise<SshKeyChoice> {
    const [firstKey] = request.sshPublicKeys;
    if (firstKey === undefined) {
      if (this.options.sshKeyName) return { name: this.options.sshKeyName, registeredId: null };
      throw new ProviderFailure(PROVIDER, 'rejected', 'Lambda launches only with an SSH key: give a public key or configure sshKeyName');
    }
    const publicKey = firstKey.trim();
    try {
      const keys = sshKeyListSchema.parse(await this.client.call('GET', '/ssh-keys', { idempotent: true }));
      const material = keyMaterial(publicKey);
      const same = keys.find((key) => key.public_key !== undefined && keyMaterial(key.public_key) === material);
      if (same) return { name: same.name, registeredId: null };

      const created = sshKeySchema.parse(
        await this.client.call('POST', '/ssh-keys', {
          idempotent: false,
          body: { name: sshKeyNameFor(request.label), public_key: publicKey },
        }),
      );
      return { name: created.name, registeredId: created.id };
    } catch (error) {
      throw toFailure('action', 'register SSH key', error);
    }
  }

  /** Deletes keys this adapter registered once no live instance of the account uses them any more. */
  private async releaseSshKeys(terminated: LambdaInstance[]): Promise<void> {
    const candidates = new Set(terminated.flatMap((i) => i.ssh_key_names).filter((n) => n.startsWith(SSH_KEY_PREFIX)));
    if (candidates.size === 0) return;
    const endedIds = new Set(terminated.map((i) => i.id));
    for (const instance of await this.listInstances()) {
      if (endedIds.has(instance.id) || ENDED.has(instance.status)) continue;
      for (const name of instance.ssh_key_names) candidates.delete(name);
    }
    if (candidates.size === 0) return;
    const keys = sshKeyListSchema.parse(await this.client.call('GET', '/ssh-keys', { idempotent: true }));
    for (const key of keys) if (candidates.has(key.name)) await this.deleteSshKey(key.id);
  }

  private async deleteSshKey(keyId: string): Promise<void> {
    try {
      await this.client.call('DELETE', `/ssh-keys/${encodeURIComponent(keyId)}`, { idempotent: true });
    } catch (error) {
      if (error instanceof LambdaApiError && error.status === 404) return;
      throw error;
    }
  }
}
