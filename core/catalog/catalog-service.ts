import { notFound } from '../errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { Ids } from '../ports/ids.ts';
import type { SecretBox, Sha256 } from '../ports/secret-box.ts';
import type { Storage } from '../ports/storage.ts';
import type { CatalogContext } from './context.ts';
import { createImage, type ImageInput } from './create-image.ts';
import { createTemplate, type TemplateInput } from './create-template.ts';
import { deleteImage } from './delete-image.ts';
import { deleteSshKey } from './delete-ssh-key.ts';
import { deleteTemplate } from './delete-template.ts';
import { imageForRental, sshKeyForRental, templateForRental, type TemplateForRental } from './for-rental.ts';
import type { Image, SshKey, Template } from './records.ts';
import { checkSecretsKey, type ImageForRental, type SecretsKeyCheck } from './registry-passwords.ts';
import { saveSshKey, type SshKeyInput } from './save-ssh-key.ts';
import { updateImage, type ImagePatch } from './update-image.ts';
import { updateTemplate, type TemplatePatch } from './update-template.ts';

/**
 * A tenant's SSH keys, container images and rental templates (docs/decisions.md, "Catalog (SSH keys, images, templates)"). Every lookup is by
 * tenant and id, so another tenant's ids read as unknown. Registry passwords are sealed with the SecretBox on the way
 * in and opened only for a rental (imageForRental, templateForRental): no other answer carries them. Each command is
 * a file of core/catalog; this object hands them what they work with, and answers the plain reads itself.
 */
export class CatalogService {
  private readonly context: CatalogContext;

  /** `secretBox` null: no secrets key is configured (PostgreSQL without SECRETS_KEY); registry passwords are refused. */
  constructor(deps: { storage: Storage; clock: Clock; ids: Ids; hashing: Sha256; secretBox: SecretBox | null }) {
    this.context = { storage: deps.storage, clock: deps.clock, ids: deps.ids, hashing: deps.hashing, secretBox: deps.secretBox };
  }

  // ---- SSH keys -----------------------------------------------------------------------------------

  saveSshKey(tenantId: string, input: SshKeyInput, tokenId: string): Promise<SshKey> {
    return saveSshKey(this.context, tenantId, input, tokenId);
  }

  listSshKeys(tenantId: string): Promise<SshKey[]> {
    return this.context.storage.read((uow) => uow.sshKeys.list(tenantId));
  }

  async sshKey(tenantId: string, keyId: string): Promise<SshKey> {
    const key = await this.context.storage.read((uow) => uow.sshKeys.get(tenantId, keyId));
    if (!key) throw notFound(`SSH key ${keyId}`);
    return key;
  }

  deleteSshKey(tenantId: string, keyId: string): Promise<void> {
    return deleteSshKey(this.context, tenantId, keyId);
  }

  sshKeyForRental(tenantId: string, keyId: string, field: (string | number)[] = ['body', 'ssh_key_id']): Promise<string> {
    return sshKeyForRental(this.context, tenantId, keyId, field);
  }

  // ---- images -------------------------------------------------------------------------------------

  createImage(tenantId: string, input: ImageInput, tokenId: string): Promise<Image> {
    return createImage(this.context, tenantId, input, tokenId);
  }

  listImages(tenantId: string): Promise<Image[]> {
    return this.context.storage.read((uow) => uow.images.list(tenantId));
  }

  updateImage(tenantId: string, imageId: string, patch: ImagePatch): Promise<Image> {
    return updateImage(this.context, tenantId, imageId, patch);
  }

  deleteImage(tenantId: string, imageId: string): Promise<void> {
    return deleteImage(this.context, tenantId, imageId);
  }

  imageForRental(tenantId: string, imageId: string, field: (string | number)[] = ['body', 'image_id']): Promise<ImageForRental> {
    return imageForRental(this.context, tenantId, imageId, field);
  }

  checkSecretsKey(): Promise<SecretsKeyCheck> {
    return checkSecretsKey(this.context);
  }

  // ---- templates ----------------------------------------------------------------------------------

  createTemplate(tenantId: string, input: TemplateInput, tokenId: string): Promise<Template> {
    return createTemplate(this.context, tenantId, input, tokenId);
  }

  listTemplates(tenantId: string): Promise<Template[]> {
    return this.context.storage.read((uow) => uow.templates.list(tenantId));
  }

  updateTemplate(tenantId: string, templateId: string, patch: TemplatePatch): Promise<Template> {
    return updateTemplate(this.context, tenantId, templateId, patch);
  }

  deleteTemplate(tenantId: string, templateId: string): Promise<void> {
    return deleteTemplate(this.context, tenantId, templateId);
  }

  templateForRental(tenantId: string, templateId: string, field: (string | number)[] = ['body', 'template_id']): Promise<TemplateForRental> {
    return templateForRental(this.context, tenantId, templateId, field);
  }
}
