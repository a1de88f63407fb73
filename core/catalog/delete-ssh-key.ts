import { notFound } from '../errors.ts';
import { inUse, type CatalogContext } from './context.ts';

/** Deletes a key no template names (a template naming it holds it: 409). */
export async function deleteSshKey(ctx: CatalogContext, tenantId: string, keyId: string): Promise<void> {
  await ctx.storage.transaction(async (uow) => {
    if (!(await uow.sshKeys.lock(tenantId, keyId))) throw notFound(`SSH key ${keyId}`);
    const templates = await uow.templates.usingSshKey(tenantId, keyId);
    if (templates.length > 0) throw inUse(`SSH key ${keyId}`, templates);
    await uow.sshKeys.remove(tenantId, keyId);
  });
}
