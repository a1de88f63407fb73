import { notFound } from '../errors.ts';
import { definedOnly, type CatalogContext } from './context.ts';
import type { ImageInput } from './create-image.ts';
import { checkedImage } from './image-rules.ts';
import type { Image } from './records.ts';
import { sealPassword } from './registry-passwords.ts';

/** A field left out stays as it is; null clears a nullable one. */
export type ImagePatch = Partial<ImageInput>;

/** Changes the fields sent; a new password is sealed, null removes it. */
export async function updateImage(ctx: CatalogContext, tenantId: string, imageId: string, patch: ImagePatch): Promise<Image> {
  return ctx.storage.transaction(async (uow) => {
    const current = await uow.images.lock(tenantId, imageId);
    if (!current) throw notFound(`image ${imageId}`);
    const { registryPassword, ...rest } = patch;
    const next = checkedImage({
      ...current,
      ...definedOnly(rest),
      ...(registryPassword !== undefined && { registryPasswordSealed: registryPassword === null ? null : sealPassword(ctx, registryPassword, imageId) }),
    });
    await uow.images.update(next);
    return next;
  });
}
