import { notFound } from '../errors.ts';
import type { CatalogContext } from './context.ts';

/** Deletes one of the tenant's templates (an unknown id, or another tenant's, is 404). */
export async function deleteTemplate(ctx: CatalogContext, tenantId: string, templateId: string): Promise<void> {
  await ctx.storage.transaction(async (uow) => {
    if (!(await uow.templates.lock(tenantId, templateId))) throw notFound(`template ${templateId}`);
    await uow.templates.remove(tenantId, templateId);
  });
}
