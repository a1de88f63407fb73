import { ZodError } from 'zod';
import type { Offer } from '../../../core/market/offer.ts';
import type { StandardFilter } from '../../../core/market/search-filter.ts';
import { ProviderFailure, type CreateMachineRequest, type Machine, type MachineOption, type Provider, type Rebootable } from '../../../core/ports/providers.ts';
import { optionValuesProblem, unsupportedOptions } from '../shared/machine-options.ts';
import { ShadeformApiError, ShadeformTransportError, type ShadeformClient } from './client.ts';
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
  type OfferContext,
  type ShadeformInstanceType,
} from './mapping.ts';

type Operation = 'create' | 'action' | 'read';

export const toFailure = (operation: Operation, what: string, error: unknown): ProviderFailure => {
  if (error instanceof ProviderFailure) return error;
  if (error instanceof ShadeformApiError) {
    const message = `${what}: ${error.status === 401 || error.status === 403 ? 'API key refused: check SHADEFORM_API_KEY' : `HTTP ${error.status}: ${error.message}`}`;
    const upstreamFault = error.status >= 500;
    if (operation === 'create') return new ProviderFailure(PROVIDER, upstreamFault ? 'ambiguous' : 'rejected', message, error.status);
    if (operation === 'action') return new ProviderFailure(PROVIDER, upstreamFault || error.status === 429 ? 'unavailable' : 'rejected', message, error.status);
    return new ProviderFailure(PROVIDER, 'unavailable', message, error.status);
  }
  const kind = operation === 'create' ? 'ambiguous' : 'unavailable';
  if (error instanceof ShadeformTransportError) return new ProviderFailure(PROVIDER, kind, `${what}: ${error.message}`);
  if (error instanceof ZodError) return new ProviderFailure(PROVIDER, kind, `${what}: unexpected answer shape (${error.issues[0]?.message ?? 'invalid'})`);
  return new ProviderFailure(PROVIDER, kind, `${what}: ${String(error)}`);
};

const isGone = (error: unknown): boolean => error instanceof ShadeformApiError && error.status === 404;

/**
 * Shadeform resells other clouds' machines: its offers name the cloud behind each (`underlyingCloud`), and the clouds
 * this control plane reaches directly are left out, so one machine is not listed twice. A create is asynchronous
 * (pending until active); each machine states its own SSH user and port. One SSH key by id, the others and a startup
 * script through a launch script; restart. No container options (a launch is a script or a container, not both).
 */
export class ShadeformProvider implements Provider, Rebootable {
  readonly name = PROVIDER;
  readonly machineOptions: readonly MachineOption[] = ['ssh_keys', 'startup_script'];
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

  async createMachine(request: CreateMachineRequest): Promise<Machine> {
    const where = parseOfferId(request.offerId);
    if (!where) throw new ProviderFailure(PROVIDER, 'rejected', `no such offer: ${request.offerId}`);
    const unsupported = unsupportedOptions(request, this.machineOptions);
    if (unsupported.length > 0) throw new ProviderFailure(PROVIDER, 'rejected', `Shadeform cannot carry out ${unsupported.join(', ')}`);
    const problem = optionValuesProblem(request);
    if (problem) throw new ProviderFailure(PROVIDER, 'rejected', problem);
    if (this.context.excluded.has(this.context.providerNamed(where.cloud))) {
      throw new ProviderFailure(PROVIDER, 'rejected', `${where.cloud} is reached directly here, not through Shadeform`);
    }
    const [firstKey, ...extraKeys] = request.sshPublicKeys;
    const sshKeyId = firstKey === undefined ? null : await this.sshKeyIdFor(firstKey, request.label);
    let id: string;
    try {
      const data = await this.client.call('POST', '/instances/create', {
        idempotent: false,
        body: createBody({ ...where, label: request.label, sshKeyId, extraKeys, startupScript: request.startupScript, volumeIds: request.volumeIds }),
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

  async getMachine(machineId: string): Promise<Machine | null> {
    try {
      return toMachine(instanceSchema.parse(await this.client.call('GET', `/instances/${encodeURIComponent(machineId)}/info`, { idempotent: true })));
    } catch (error) {
      if (isGone(error)) return null;
      throw toFailure('read', 'get instance', error);
    }
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
