import type { CatalogContext } from './context.ts';
import { checkedImage } from './image-rules.ts';
import type { Image } from './records.ts';
import { sealPassword } from './registry-passwords.ts';

export interface ImageInput {
  name: string;
  image: string;
  registryUsername: string | null;
  registryPassword: string | null;
  command: string | null;
}

/** Saves a container image with its command and registry credentials, the password sealed, as the token `tokenId`. */
export async function createImage(ctx: CatalogContext, tenantId: string, input: ImageInput, tokenId: string): Promise<Image> {
  const id = ctx.ids.newId('img');
  const image = checkedImage({
    id,
    tenantId,
    name: input.name,
    image: input.image,
    registryUsername: input.registryUsername,
    registryPasswordSealed: input.registryPassword === null ? null : sealPassword(ctx, input.registryPassword, id),
    command: input.command,
    tokenId,
    createdAt: ctx.clock.now(),
  });
  await ctx.storage.transaction((uow) => uow.images.add(image));
  return image;
}
