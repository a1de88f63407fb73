import type { CatalogContext } from './context.ts';
import { checkReference } from './image-rules.ts';
import type { Template } from './records.ts';
import { holdReferences } from './template-references.ts';
import { checkName, checkTemplateFields } from './template-rules.ts';

export type TemplateInput = Omit<Template, 'id' | 'tenantId' | 'tokenId' | 'createdAt'>;

/**
 * Saves a rental template as the token `tokenId`; the image and keys it names must be the tenant's (anyone's of the
 * tenant: naming them is using them), and stay so while it names them.
 */
export async function createTemplate(ctx: CatalogContext, tenantId: string, input: TemplateInput, tokenId: string): Promise<Template> {
  const template: Template = { ...input, name: checkName(input.name), id: ctx.ids.newId('tpl'), tenantId, tokenId, createdAt: ctx.clock.now() };
  checkTemplateFields(template);
  if (template.image !== null) checkReference(template.image, 'image');
  await ctx.storage.transaction(async (uow) => {
    await holdReferences(uow, template);
    await uow.templates.add(template);
  });
  return template;
}
