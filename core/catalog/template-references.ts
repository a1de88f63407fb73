import { invalidInput } from '../errors.ts';
import type { UnitOfWork } from '../ports/storage.ts';
import type { Template } from './records.ts';

/** The template's image and keys must be the tenant's; they stay locked against deletion until the commit. */
export async function holdReferences(uow: UnitOfWork, template: Template): Promise<void> {
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
