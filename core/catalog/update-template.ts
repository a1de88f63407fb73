import { invalidInput, notFound } from '../errors.ts';
import { definedOnly, type CatalogContext } from './context.ts';
import type { TemplateInput } from './create-template.ts';
import { checkReference } from './image-rules.ts';
import type { Template } from './records.ts';
import { holdReferences } from './template-references.ts';
import { checkName, checkTemplateFields } from './template-rules.ts';

/** A field left out stays as it is; setting image_id or image replaces the other. */
export type TemplatePatch = Partial<TemplateInput>;

/** Changes the fields sent, checked as a whole again (the references held again). */
export async function updateTemplate(ctx: CatalogContext, tenantId: string, templateId: string, patch: TemplatePatch): Promise<Template> {
  if (patch.imageId != null && patch.image != null) throw invalidInput(['body', 'image'], 'send image_id (a saved image) or image (a reference), not both');
  return ctx.storage.transaction(async (uow) => {
    const current = await uow.templates.lock(tenantId, templateId);
    if (!current) throw notFound(`template ${templateId}`);
    const next: Template = { ...current, ...definedOnly(patch) };
    // image_id and image are alternatives: choosing one drops the other
    if (patch.imageId != null) next.image = null;
    if (patch.image != null) next.imageId = null;
    if (patch.name !== undefined) next.name = checkName(patch.name);
    checkTemplateFields(next);
    if (patch.image != null) checkReference(patch.image, 'image');
    await holdReferences(uow, next);
    await uow.templates.update(next);
    return next;
  });
}
