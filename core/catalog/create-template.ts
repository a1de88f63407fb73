import type { CatalogContext } from './context.ts';
import { checkReference } from './image-rules.ts';
import type { Template } from './records.ts';
import { holdReferences } from './template-references.ts';
import { checkName, checkTemplateFields } from './template-rules.ts';

export type TemplateInput = Omit<Template, 'id' | 'tenantId' | 'createdAt'>;

/** Saves a rental template; the image and keys it names must be the tenant's, and stay so while it names them. */
export async function createTemplate(ctx: CatalogContext, tenantId: string, input: TemplateInput): Promise<Template> {
  const template: Template = { ...input, name: checkName(input.name), id: ctx.ids.newId('tpl'), tenantId, createdAt: ctx.clock.now() };
  checkTemplateFields(template);
  if (template.image !== null) checkReference(template.image, 'image');
  await ctx.storage.transaction(async (uow) => {
    await holdReferences(uow, template);
    await uow.templates.add(template);
  });
  return template;
}
