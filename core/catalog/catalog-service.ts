import { DomainError, invalidInput, notFound } from '../errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { Ids } from '../ports/ids.ts';
import type { SecretBox, Sha256 } from '../ports/secret-box.ts';
import type { Storage, UnitOfWork } from '../ports/storage.ts';
import { parseContainerReference } from './container-reference.ts';
import { CATALOG_LIMITS } from './limits.ts';
import type { Image, SshKey, Template, TemplateSearch } from './records.ts';
import { parseSshPublicKey, sshFingerprint } from './ssh-public-key.ts';
import { checkName, checkTemplateFields } from './template-rules.ts';

export interface SshKeyInput {
  name: string;
  publicKey: string;
}

export interface ImageInput {
  name: string;
  image: string;
  registryUsername: string | null;
  registryPassword: string | null;
  command: string | null;
}

/** A field left out stays as it is; null clears a nullable one. */
export type ImagePatch = Partial<ImageInput>;

export type TemplateInput = Omit<Template, 'id' | 'tenantId' | 'createdAt'>;

/** A field left out stays as it is; setting image_id or image replaces the other. */
export type TemplatePatch = Partial<TemplateInput>;

/** What a rental needs of an image: the reference, the command, and the registry credentials in the clear. */
export interface ImageForRental {
  imageId: string | null;
  image: string;
  command: string | null;
  registryAuth: { username: string; password: string } | null;
}

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

/** How the configured secrets key fits what the database holds (checked at start). */
export type SecretsKeyCheck = 'ok' | 'nothing-sealed' | 'no-key' | 'wrong-key';

const NO_SECRETS_KEY =
  'this server keeps no registry passwords: its operator has not set SECRETS_KEY (needed with PostgreSQL); save the image without registry_password, or ask the operator to set it';

const inUse = (what: string, templateIds: string[]) =>
  new DomainError('CONFLICT', `${what} is used by template(s) ${templateIds.join(', ')}: remove it from them (PATCH) or delete them first`);

/**
 * A tenant's SSH keys, container images and rental templates (DESIGN.md §12). Every lookup is by tenant and
 * id, so another tenant's ids read as unknown. Registry passwords are sealed with the SecretBox on the way in
 * and opened only for a rental (imageForRental, templateForRental): no other answer carries them.
 */
export class CatalogService {
  private readonly storage: Storage;
  private readonly clock: Clock;
  private readonly ids: Ids;
  private readonly hashing: Sha256;
  private readonly secretBox: SecretBox | null;

  /** `secretBox` null: no secrets key is configured (PostgreSQL without SECRETS_KEY); registry passwords are refused. */
  constructor(deps: { storage: Storage; clock: Clock; ids: Ids; hashing: Sha256; secretBox: SecretBox | null }) {
    this.storage = deps.storage;
    this.clock = deps.clock;
    this.ids = deps.ids;
    this.hashing = deps.hashing;
    this.secretBox = deps.secretBox;
  }

  // ---- SSH keys -----------------------------------------------------------------------------------

  async saveSshKey(tenantId: string, input: SshKeyInput): Promise<SshKey> {
    const name = checkName(input.name);
    const parsed = parseSshPublicKey(input.publicKey);
    if (!parsed.ok) throw invalidInput(['body', 'public_key'], parsed.reason);
    const key: SshKey = {
      id: this.ids.newId('key'),
      tenantId,
      name,
      publicKey: parsed.key.line,
      keyType: parsed.key.type,
      fingerprint: sshFingerprint((bytes) => this.hashing.sha256(bytes), parsed.key.blob),
      createdAt: this.clock.now(),
    };
    const existing = await this.storage.transaction((uow) => uow.sshKeys.add(key));
    if (existing) {
      throw new DomainError('CONFLICT', `this key (${key.fingerprint}) is already saved as ${existing.id} ("${existing.name}"); the comment does not make it another key`);
    }
    return key;
  }

  listSshKeys(tenantId: string): Promise<SshKey[]> {
    return this.storage.read((uow) => uow.sshKeys.list(tenantId));
  }

  async sshKey(tenantId: string, keyId: string): Promise<SshKey> {
    const key = await this.storage.read((uow) => uow.sshKeys.get(tenantId, keyId));
    if (!key) throw notFound(`SSH key ${keyId}`);
    return key;
  }

  async deleteSshKey(tenantId: string, keyId: string): Promise<void> {
    await this.storage.transaction(async (uow) => {
      if (!(await uow.sshKeys.lock(tenantId, keyId))) throw notFound(`SSH key ${keyId}`);
      const templates = await uow.templates.usingSshKey(tenantId, keyId);
      if (templates.length > 0) throw inUse(`SSH key ${keyId}`, templates);
      await uow.sshKeys.remove(tenantId, keyId);
    });
  }

  /** A saved key's public key line, for a rental's `ssh_key_id` (field names where the id came from). */
  async sshKeyForRental(tenantId: string, keyId: string, field: (string | number)[] = ['body', 'ssh_key_id']): Promise<string> {
    const key = await this.storage.read((uow) => uow.sshKeys.get(tenantId, keyId));
    if (!key) throw invalidInput(field, `no SSH key ${keyId} in this tenant (GET /v1/ssh-keys lists them)`);
    return key.publicKey;
  }

  // ---- images -------------------------------------------------------------------------------------

  async createImage(tenantId: string, input: ImageInput): Promise<Image> {
    const id = this.ids.newId('img');
    const image = this.checkedImage({
      id,
      tenantId,
      name: input.name,
      image: input.image,
      registryUsername: input.registryUsername,
      registryPasswordSealed: input.registryPassword === null ? null : this.seal(input.registryPassword, id),
      command: input.command,
      createdAt: this.clock.now(),
    });
    await this.storage.transaction((uow) => uow.images.add(image));
    return image;
  }

  listImages(tenantId: string): Promise<Image[]> {
    return this.storage.read((uow) => uow.images.list(tenantId));
  }

  async updateImage(tenantId: string, imageId: string, patch: ImagePatch): Promise<Image> {
    return this.storage.transaction(async (uow) => {
      const current = await uow.images.lock(tenantId, imageId);
      if (!current) throw notFound(`image ${imageId}`);
      const { registryPassword, ...rest } = patch;
      const next = this.checkedImage({
        ...current,
        ...definedOnly(rest),
        ...(registryPassword !== undefined && { registryPasswordSealed: registryPassword === null ? null : this.seal(registryPassword, imageId) }),
      });
      await uow.images.update(next);
      return next;
    });
  }

  async deleteImage(tenantId: string, imageId: string): Promise<void> {
    await this.storage.transaction(async (uow) => {
      if (!(await uow.images.lock(tenantId, imageId))) throw notFound(`image ${imageId}`);
      const templates = await uow.templates.usingImage(tenantId, imageId);
      if (templates.length > 0) throw inUse(`image ${imageId}`, templates);
      await uow.images.remove(tenantId, imageId);
    });
  }

  /**
   * A saved image for a rental's `image_id`: the reference, the command and the registry credentials opened.
   * An id that is not the tenant's is INVALID_INPUT naming `field` (default body.image_id).
   */
  async imageForRental(tenantId: string, imageId: string, field: (string | number)[] = ['body', 'image_id']): Promise<ImageForRental> {
    const image = await this.storage.read((uow) => uow.images.get(tenantId, imageId));
    if (!image) throw invalidInput(field, `no image ${imageId} in this tenant (GET /v1/images lists them)`);
    return this.opened(image);
  }

  /** Whether the secrets key opens what the database holds: start-up refuses 'no-key' and 'wrong-key'. */
  async checkSecretsKey(): Promise<SecretsKeyCheck> {
    const sample = await this.storage.read((uow) => uow.images.anySealed());
    if (!sample) return 'nothing-sealed';
    if (!this.secretBox) return 'no-key';
    try {
      this.secretBox.open(sample.sealed, sample.imageId);
      return 'ok';
    } catch {
      return 'wrong-key';
    }
  }

  // ---- templates ----------------------------------------------------------------------------------

  async createTemplate(tenantId: string, input: TemplateInput): Promise<Template> {
    const template: Template = { ...input, name: checkName(input.name), id: this.ids.newId('tpl'), tenantId, createdAt: this.clock.now() };
    checkTemplateFields(template);
    if (template.image !== null) this.checkReference(template.image, 'image');
    await this.storage.transaction(async (uow) => {
      await this.holdReferences(uow, template);
      await uow.templates.add(template);
    });
    return template;
  }

  listTemplates(tenantId: string): Promise<Template[]> {
    return this.storage.read((uow) => uow.templates.list(tenantId));
  }

  async updateTemplate(tenantId: string, templateId: string, patch: TemplatePatch): Promise<Template> {
    if (patch.imageId != null && patch.image != null) throw invalidInput(['body', 'image'], 'send image_id (a saved image) or image (a reference), not both');
    return this.storage.transaction(async (uow) => {
      const current = await uow.templates.lock(tenantId, templateId);
      if (!current) throw notFound(`template ${templateId}`);
      const next: Template = { ...current, ...definedOnly(patch) };
      // image_id and image are alternatives: choosing one drops the other
      if (patch.imageId != null) next.image = null;
      if (patch.image != null) next.imageId = null;
      if (patch.name !== undefined) next.name = checkName(patch.name);
      checkTemplateFields(next);
      if (patch.image != null) this.checkReference(patch.image, 'image');
      await this.holdReferences(uow, next);
      await uow.templates.update(next);
      return next;
    });
  }

  async deleteTemplate(tenantId: string, templateId: string): Promise<void> {
    await this.storage.transaction(async (uow) => {
      if (!(await uow.templates.lock(tenantId, templateId))) throw notFound(`template ${templateId}`);
      await uow.templates.remove(tenantId, templateId);
    });
  }

  /**
   * A template for a rental's `template_id`, with its image opened and its keys as public key lines. An id that
   * is not the tenant's is INVALID_INPUT naming `field` (default body.template_id).
   */
  async templateForRental(tenantId: string, templateId: string, field: (string | number)[] = ['body', 'template_id']): Promise<TemplateForRental> {
    return this.storage.read(async (uow) => {
      const template = await uow.templates.get(tenantId, templateId);
      if (!template) throw invalidInput(field, `no template ${templateId} in this tenant (GET /v1/templates lists them)`);
      let image: ImageForRental | null = null;
      if (template.imageId !== null) {
        const saved = await uow.images.get(tenantId, template.imageId);
        // deleting an image a template uses is refused, so this is a broken invariant, not an input
        if (!saved) throw new Error(`template ${templateId} names image ${template.imageId}, which is gone`);
        image = this.opened(saved);
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

  // ---- inside -------------------------------------------------------------------------------------

  private seal(password: string, imageId: string): string {
    if (!this.secretBox) throw invalidInput(['body', 'registry_password'], NO_SECRETS_KEY);
    if (password.length === 0) throw invalidInput(['body', 'registry_password'], 'must not be empty; send null to remove it');
    if (password.length > CATALOG_LIMITS.registryPassword) throw invalidInput(['body', 'registry_password'], `at most ${CATALOG_LIMITS.registryPassword} characters`);
    return this.secretBox.seal(password, imageId);
  }

  private opened(image: Image): ImageForRental {
    let registryAuth: ImageForRental['registryAuth'] = null;
    if (image.registryPasswordSealed !== null) {
      if (!this.secretBox) throw new Error(`image ${image.id} has a sealed registry password and this server has no secrets key`);
      registryAuth = { username: image.registryUsername ?? '', password: this.secretBox.open(image.registryPasswordSealed, image.id) };
    }
    return { imageId: image.id, image: image.image, command: image.command, registryAuth };
  }

  private checkReference(reference: string, field: string): void {
    const parsed = parseContainerReference(reference);
    if (!parsed.ok) throw invalidInput(['body', field], parsed.reason);
  }

  private checkedImage(image: Image): Image {
    const name = checkName(image.name);
    this.checkReference(image.image, 'image');
    if (image.registryUsername !== null && (image.registryUsername.length === 0 || image.registryUsername.length > CATALOG_LIMITS.registryUsername)) {
      throw invalidInput(['body', 'registry_username'], `1 to ${CATALOG_LIMITS.registryUsername} characters, or null`);
    }
    if (image.registryPasswordSealed !== null && image.registryUsername === null) {
      throw invalidInput(['body', 'registry_username'], 'a registry password needs its username; send registry_username (or registry_password: null to remove the password)');
    }
    if (image.command !== null && (image.command.trim().length === 0 || image.command.length > CATALOG_LIMITS.command)) {
      throw invalidInput(['body', 'command'], `1 to ${CATALOG_LIMITS.command} characters, or null for the image's own`);
    }
    return { ...image, name };
  }

  /** The template's image and keys must be the tenant's; they stay locked against deletion until the commit. */
  private async holdReferences(uow: UnitOfWork, template: Template): Promise<void> {
    if (template.imageId !== null && !(await uow.images.hold(template.tenantId, template.imageId))) {
      throw invalidInput(['body', 'image_id'], `no image ${template.imageId} in this tenant (GET /v1/images lists them)`);
    }
    if (template.sshKeyIds.length === 0) return;
    const held = new Set((await uow.sshKeys.many(template.tenantId, template.sshKeyIds, { hold: true })).map((key) => key.id));
    const missing = template.sshKeyIds.findIndex((id) => !held.has(id));
    if (missing >= 0) {
      throw invalidInput(['body', 'ssh_key_ids', missing], `no SSH key ${template.sshKeyIds[missing]} in this tenant (GET /v1/ssh-keys lists them)`);
    }
  }
}

/** The fields of a patch that were sent (undefined: left out). */
function definedOnly<T extends object>(patch: T): Partial<T> {
  return Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined)) as Partial<T>;
}
