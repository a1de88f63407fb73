import { checkTemplateFields } from '../catalog/template-rules.ts';
import type { SearchTerms } from '../market/search-terms.ts';
import type { CreateMachineRequest, MachineOption } from '../ports/providers.ts';

/** What a rental asks for beyond the node: saved catalog entries by id, or values given directly. */
export interface RentalOptionsRequest {
  sshPublicKey: string | null;
  sshKeyId: string | null;
  imageId: string | null;
  templateId: string | null;
  /** null: not sent (the template's, or none). */
  volumeIds: string[] | null;
  env: Record<string, string> | null;
  ports: number[] | null;
  startupScript: string | null;
  terminationHours: number | null;
}

/** The catalog's side of a rental (the CatalogService answers these; an unknown id is 422 naming `field`). */
export interface RentalCatalog {
  sshKeyForRental(tenantId: string, keyId: string, field?: (string | number)[]): Promise<string>;
  imageForRental(tenantId: string, imageId: string, field?: (string | number)[]): Promise<{ image: string; command: string | null; registryAuth: { username: string; password: string } | null }>;
  templateForRental(
    tenantId: string,
    templateId: string,
    field?: (string | number)[],
  ): Promise<{
    image: { image: string; command: string | null; registryAuth: { username: string; password: string } | null } | null;
    sshPublicKeys: string[];
    env: Record<string, string>;
    ports: number[];
    startupScript: string | null;
    terminationHours: number | null;
    volumeIds: string[];
    /** What a rental from it without a node_id rents: the cheapest match now. */
    search: SearchTerms;
  }>;
}

/** What the provider's create carries out, besides the offer and our label. */
export type MachineSetup = Omit<CreateMachineRequest, 'offerId' | 'label' | 'name' | 'volumeIds'>;

export interface ResolvedOptions {
  setup: MachineSetup;
  /** Our volume ids to attach. */
  volumeIds: string[];
  terminationHours: number | null;
  /** What the instance record keeps of where its setup came from. */
  record: { image: string | null; templateId: string | null; sshKeyId: string | null };
}

/**
 * A rental's options with its template's under them: each field given explicitly wins over the template's
 * (a whole field: env and ports are replaced, not merged). Keys: the key sent and the saved key named, else
 * the template's keys.
 */
export async function resolveRentalOptions(catalog: RentalCatalog, tenantId: string, request: RentalOptionsRequest): Promise<ResolvedOptions> {
  // what is sent here obeys the bounds a template's fields obey (names, sizes, repeats), whoever sends it
  checkTemplateFields({ imageId: null, image: null, sshKeyIds: [], env: request.env ?? {}, ports: request.ports ?? [], startupScript: request.startupScript, terminationHours: null, volumeIds: request.volumeIds ?? [] });
  const template = request.templateId ? await catalog.templateForRental(tenantId, request.templateId) : null;
  const image = request.imageId ? await catalog.imageForRental(tenantId, request.imageId) : (template?.image ?? null);
  const explicitKeys = [
    ...(request.sshPublicKey ? [request.sshPublicKey] : []),
    ...(request.sshKeyId ? [await catalog.sshKeyForRental(tenantId, request.sshKeyId)] : []),
  ];
  return {
    setup: {
      sshPublicKeys: explicitKeys.length > 0 ? explicitKeys : (template?.sshPublicKeys ?? []),
      image: image?.image ?? null,
      registryAuth: image?.registryAuth ?? null,
      command: image?.command ?? null,
      env: request.env ?? template?.env ?? {},
      ports: request.ports ?? template?.ports ?? [],
      startupScript: request.startupScript ?? template?.startupScript ?? null,
    },
    volumeIds: request.volumeIds ?? template?.volumeIds ?? [],
    terminationHours: request.terminationHours ?? template?.terminationHours ?? null,
    record: { image: image?.image ?? null, templateId: request.templateId, sshKeyId: request.sshKeyId },
  };
}

/** The create options a resolved rental needs that `offered` lacks (each names a MachineOption). */
export function missingOptions(options: ResolvedOptions, offered: readonly MachineOption[]): MachineOption[] {
  const { setup } = options;
  const needed: [MachineOption, boolean][] = [
    ['custom_image', setup.image !== null],
    ['registry_auth', setup.registryAuth !== null],
    ['command', setup.command !== null],
    ['env', Object.keys(setup.env).length > 0],
    ['ports', setup.ports.length > 0],
    ['startup_script', setup.startupScript !== null],
    ['ssh_keys', setup.sshPublicKeys.length > 0],
    ['volumes', options.volumeIds.length > 0],
  ];
  return needed.filter(([option, asked]) => asked && !offered.includes(option)).map(([option]) => option);
}
