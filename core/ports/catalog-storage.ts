import type { Image, SshKey, Template } from '../catalog/records.ts';

/** SSH keys, images and templates: every call is scoped to one tenant, so another tenant's ids read as absent. */
export interface SshKeyStore {
  /** Adds the key unless the tenant has one of the same fingerprint; answers that one then (and adds nothing). */
  add(key: SshKey): Promise<SshKey | null>;
  get(tenantId: string, keyId: string): Promise<SshKey | null>;
  /** Oldest first. */
  list(tenantId: string): Promise<SshKey[]>;
  /**
   * The tenant's keys among these ids (others are left out). With `hold`, they stay locked against deletion until
   * the transaction ends (FOR KEY SHARE), so a template never keeps an id deleted under it.
   */
  many(tenantId: string, keyIds: readonly string[], options?: { hold?: boolean }): Promise<SshKey[]>;
  /** Locked until the transaction ends (a delete waits for templates being saved with the key). */
  lock(tenantId: string, keyId: string): Promise<SshKey | null>;
  remove(tenantId: string, keyId: string): Promise<void>;
}

export interface ImageStore {
  add(image: Image): Promise<void>;
  get(tenantId: string, imageId: string): Promise<Image | null>;
  /** Oldest first. */
  list(tenantId: string): Promise<Image[]>;
  /** Locked against deletion until the transaction ends (FOR KEY SHARE): a template is being saved with it. */
  hold(tenantId: string, imageId: string): Promise<Image | null>;
  /** Locked until the transaction ends (FOR UPDATE). */
  lock(tenantId: string, imageId: string): Promise<Image | null>;
  update(image: Image): Promise<void>;
  remove(tenantId: string, imageId: string): Promise<void>;
  /** Any one sealed registry password of any tenant: the start-up check that the secrets key opens them. */
  anySealed(): Promise<{ imageId: string; sealed: string } | null>;
}

export interface TemplateStore {
  add(template: Template): Promise<void>;
  get(tenantId: string, templateId: string): Promise<Template | null>;
  /** Oldest first. */
  list(tenantId: string): Promise<Template[]>;
  lock(tenantId: string, templateId: string): Promise<Template | null>;
  update(template: Template): Promise<void>;
  remove(tenantId: string, templateId: string): Promise<void>;
  /** Ids of the tenant's templates that use this image, or this SSH key. */
  usingImage(tenantId: string, imageId: string): Promise<string[]>;
  usingSshKey(tenantId: string, keyId: string): Promise<string[]>;
}
