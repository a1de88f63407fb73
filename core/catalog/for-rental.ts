import { invalidInput } from '../errors.ts';
import type { CatalogContext } from './context.ts';
import type { TemplateSearch } from './records.ts';
import { openedImage, type ImageForRental } from './registry-passwords.ts';

/** A template resolved for a rental: its image opened, its SSH keys as public key lines. */
export interface TemplateForRental {
  templateId: string;
  name: string;
  /** null: the template names no image (the provider's default). */
  image: ImageForRental | null;
  sshKeyIds: string[];
  /** The keys' `type base64 comment` lines, in the order of sshKeyIds. */
  sshPublicKeys: string[];
  env: Record<string, string>;
  ports: number[];
  startupScript: string | null;
  terminationHours: number | null;
  volumeIds: string[];
  search: TemplateSearch;
}

/** A saved key's public key line, for a rental's `ssh_key_id` (field names where the id came from). */
export async function sshKeyForRental(ctx: CatalogContext, tenantId: string, keyId: string, field: (string | number)[]): Promise<string> {
  const key = await ctx.storage.read((uow) => uow.sshKeys.get(tenantId, keyId));
  if (!key) throw invalidInput(field, `no SSH key ${keyId} in this tenant (GET /v1/ssh-keys lists them)`);
  return key.publicKey;
}

/**
 * A saved image for a rental's `image_id`: the reference, the command and the registry credentials opened.
 * An id that is not the tenant's is INVALID_INPUT naming `field`.
 */
export async function imageForRental(ctx: CatalogContext, tenantId: string, imageId: string, field: (string | number)[]): Promise<ImageForRental> {
  const image = await ctx.storage.read((uow) => uow.images.get(tenantId, imageId));
  if (!image) throw invalidInput(field, `no image ${imageId} in this tenant (GET /v1/images lists them)`);
  return openedImage(ctx, image);
}

/**
 * A template for a rental's `template_id`, with its image opened and its keys as public key lines. An id that is not
 * the tenant's is INVALID_INPUT naming `field`.
 */
export async function templateForRental(ctx: CatalogContext, tenantId: string, templateId: string, field: (string | number)[]): Promise<TemplateForRental> {
  return ctx.storage.read(async (uow) => {
    const template = await uow.templates.get(tenantId, templateId);
    if (!template) throw invalidInput(field, `no template ${templateId} in this tenant (GET /v1/templates lists them)`);
    let image: ImageForRental | null = null;
    if (template.imageId !== null) {
      const saved = await uow.images.get(tenantId, template.imageId);
      // deleting an image a template uses is refused, so this is a broken invariant, not an input
      if (!saved) throw new Error(`template ${templateId} names image ${template.imageId}, which is gone`);
      image = openedImage(ctx, saved);
    } else if (template.image !== null) {
      image = { imageId: null, image: template.image, command: null, registryAuth: null };
    }
    const keys = new Map((await uow.sshKeys.many(tenantId, template.sshKeyIds)).map((key) => [key.id, key.publicKey]));
    const sshPublicKeys = template.sshKeyIds.map((id) => {
      const line = keys.get(id);
      if (line === undefined) throw new Error(`template ${templateId} names SSH key ${id}, which is gone`);
      return line;
    });
    return {
      templateId: template.id,
      name: template.name,
      image,
      sshKeyIds: [...template.sshKeyIds],
      sshPublicKeys,
      env: { ...template.env },
      ports: [...template.ports],
      startupScript: template.startupScript,
      terminationHours: template.terminationHours,
      volumeIds: [...template.volumeIds],
      search: template.search,
    };
  });
}
