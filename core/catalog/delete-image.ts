import { notFound } from '../errors.ts';
import { inUse, type CatalogContext } from './context.ts';

/** Deletes an image no template names (a template naming it holds it: 409). */
export async function deleteImage(ctx: CatalogContext, tenantId: string, imageId: string): Promise<void> {
  await ctx.storage.transaction(async (uow) => {
    if (!(await uow.images.lock(tenantId, imageId))) throw notFound(`image ${imageId}`);
    const templates = await uow.templates.usingImage(tenantId, imageId);
    if (templates.length > 0) throw inUse(`image ${imageId}`, templates);
    await uow.images.remove(tenantId, imageId);
  });
}
