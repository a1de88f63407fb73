import { z } from 'zod';
import type { CatalogService } from '../../../core/catalog/catalog-service.ts';
import type { ActsOn } from '../../../core/tenancy/acts-on.ts';
import { defineRoute, type RouteDef } from '../route.ts';
import {
  ImageCreate,
  ImageIdParams,
  ImageOut,
  ImageUpdate,
  SshKeyCreate,
  SshKeyIdParams,
  SshKeyOut,
  TemplateCreate,
  TemplateIdParams,
  TemplateOut,
  TemplateUpdate,
  imageOut,
  sshKeyOut,
  templateOut,
} from '../schemas/catalog.ts';

const read = { kind: 'bearer', scope: 'read' } as const;
const manage = { kind: 'bearer', scope: 'manage' } as const;

const madeByAnother = (what: string) => ({
  status: 403,
  description: `The token lacks the \`manage\` scope, or the ${what} was saved by another credential and this one is not root (MADE_BY_ANOTHER)`,
});

/**
 * SSH keys, images and templates: read to list, get and rent with them (anyone's of the tenant), manage to save; a
 * credential that is not root changes and deletes only what its own subtree saved (docs/decisions.md, "One tree of
 * authority").
 */
export function catalogRoutes(catalog: CatalogService, actsOn: ActsOn): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/ssh-keys',
      operationId: 'createSshKey',
      summary: 'Save an SSH public key (ed25519, ECDSA, RSA >= 2048 bits) to install on machines',
      tags: ['ssh-keys'],
      access: manage,
      body: SshKeyCreate,
      responses: [
        { status: 201, description: 'Saved', schema: SshKeyOut },
        { status: 409, description: 'The tenant already saved this key material (the comment does not count)' },
      ],
      async handle({ caller, body }) {
        return { status: 201, body: sshKeyOut(await catalog.saveSshKey(caller!.tenantId, { name: body.name, publicKey: body.public_key }, caller!.id)) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/ssh-keys',
      operationId: 'listSshKeys',
      summary: "The tenant's SSH keys, oldest first",
      tags: ['ssh-keys'],
      access: read,
      responses: [{ status: 200, description: 'SSH keys', schema: z.array(SshKeyOut) }],
      async handle({ caller }) {
        return { status: 200, body: (await catalog.listSshKeys(caller!.tenantId)).map(sshKeyOut) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/ssh-keys/{key_id}',
      operationId: 'getSshKey',
      summary: 'One SSH key',
      tags: ['ssh-keys'],
      access: read,
      params: SshKeyIdParams,
      responses: [{ status: 200, description: 'The key', schema: SshKeyOut }],
      async handle({ caller, params }) {
        return { status: 200, body: sshKeyOut(await catalog.sshKey(caller!.tenantId, params.key_id)) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/ssh-keys/{key_id}',
      operationId: 'deleteSshKey',
      summary: 'Delete an SSH key (machines already running keep it)',
      tags: ['ssh-keys'],
      access: manage,
      params: SshKeyIdParams,
      responses: [
        { status: 204, description: 'Deleted' },
        madeByAnother('key'),
        { status: 409, description: 'A template uses the key: the detail names them' },
      ],
      async handle({ caller, params }) {
        await actsOn.require(caller!, 'SSH key', params.key_id);
        await catalog.deleteSshKey(caller!.tenantId, params.key_id);
        return { status: 204 };
      },
    }),

    defineRoute({
      method: 'post',
      path: '/v1/images',
      operationId: 'createImage',
      summary: 'Save a container image, with the credentials of its private registry (the password is kept encrypted)',
      tags: ['images'],
      access: manage,
      body: ImageCreate,
      responses: [{ status: 201, description: 'Saved', schema: ImageOut }],
      async handle({ caller, body }) {
        const image = await catalog.createImage(caller!.tenantId, {
          name: body.name,
          image: body.image,
          registryUsername: body.registry_username ?? null,
          registryPassword: body.registry_password ?? null,
          command: body.command ?? null,
        }, caller!.id);
        return { status: 201, body: imageOut(image) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/images',
      operationId: 'listImages',
      summary: "The tenant's images, oldest first (registry passwords are never answered)",
      tags: ['images'],
      access: read,
      responses: [{ status: 200, description: 'Images', schema: z.array(ImageOut) }],
      async handle({ caller }) {
        return { status: 200, body: (await catalog.listImages(caller!.tenantId)).map(imageOut) };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/v1/images/{image_id}',
      operationId: 'updateImage',
      summary: 'Rename or change an image; registry_password: null removes the password',
      tags: ['images'],
      access: manage,
      params: ImageIdParams,
      body: ImageUpdate,
      responses: [{ status: 200, description: 'The image', schema: ImageOut }, madeByAnother('image')],
      async handle({ caller, params, body }) {
        await actsOn.require(caller!, 'image', params.image_id);
        const image = await catalog.updateImage(caller!.tenantId, params.image_id, {
          ...(body.name !== undefined && { name: body.name }),
          ...(body.image !== undefined && { image: body.image }),
          ...(body.registry_username !== undefined && { registryUsername: body.registry_username }),
          ...(body.registry_password !== undefined && { registryPassword: body.registry_password }),
          ...(body.command !== undefined && { command: body.command }),
        });
        return { status: 200, body: imageOut(image) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/images/{image_id}',
      operationId: 'deleteImage',
      summary: 'Delete an image and its saved credentials',
      tags: ['images'],
      access: manage,
      params: ImageIdParams,
      responses: [
        { status: 204, description: 'Deleted' },
        madeByAnother('image'),
        { status: 409, description: 'A template uses the image: the detail names them' },
      ],
      async handle({ caller, params }) {
        await actsOn.require(caller!, 'image', params.image_id);
        await catalog.deleteImage(caller!.tenantId, params.image_id);
        return { status: 204 };
      },
    }),

    defineRoute({
      method: 'post',
      path: '/v1/templates',
      operationId: 'createTemplate',
      summary: 'Save a rental template: image, SSH keys, env, ports, startup script, window, volumes, and the machine it wants',
      tags: ['templates'],
      access: manage,
      body: TemplateCreate,
      responses: [{ status: 201, description: 'Saved', schema: TemplateOut }],
      async handle({ caller, body }) {
        const template = await catalog.createTemplate(caller!.tenantId, {
          name: body.name,
          imageId: body.image_id ?? null,
          image: body.image ?? null,
          sshKeyIds: body.ssh_key_ids,
          env: body.env,
          ports: body.ports,
          startupScript: body.startup_script ?? null,
          terminationHours: body.termination_hours ?? null,
          volumeIds: body.volume_ids,
          search: body.search,
        }, caller!.id);
        return { status: 201, body: templateOut(template) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/templates',
      operationId: 'listTemplates',
      summary: "The tenant's templates, oldest first",
      tags: ['templates'],
      access: read,
      responses: [{ status: 200, description: 'Templates', schema: z.array(TemplateOut) }],
      async handle({ caller }) {
        return { status: 200, body: (await catalog.listTemplates(caller!.tenantId)).map(templateOut) };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/v1/templates/{template_id}',
      operationId: 'updateTemplate',
      summary: 'Change a template: fields left out are kept, null clears, image_id or image replaces the other',
      tags: ['templates'],
      access: manage,
      params: TemplateIdParams,
      body: TemplateUpdate,
      responses: [{ status: 200, description: 'The template', schema: TemplateOut }, madeByAnother('template')],
      async handle({ caller, params, body }) {
        await actsOn.require(caller!, 'template', params.template_id);
        const template = await catalog.updateTemplate(caller!.tenantId, params.template_id, {
          ...(body.name !== undefined && { name: body.name }),
          ...(body.image_id !== undefined && { imageId: body.image_id }),
          ...(body.image !== undefined && { image: body.image }),
          ...(body.ssh_key_ids !== undefined && { sshKeyIds: body.ssh_key_ids }),
          ...(body.env !== undefined && { env: body.env }),
          ...(body.ports !== undefined && { ports: body.ports }),
          ...(body.startup_script !== undefined && { startupScript: body.startup_script }),
          ...(body.termination_hours !== undefined && { terminationHours: body.termination_hours }),
          ...(body.volume_ids !== undefined && { volumeIds: body.volume_ids }),
          ...(body.search !== undefined && { search: body.search }),
        });
        return { status: 200, body: templateOut(template) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/templates/{template_id}',
      operationId: 'deleteTemplate',
      summary: 'Delete a template (machines rented from it are not touched)',
      tags: ['templates'],
      access: manage,
      params: TemplateIdParams,
      responses: [{ status: 204, description: 'Deleted' }, madeByAnother('template')],
      async handle({ caller, params }) {
        await actsOn.require(caller!, 'template', params.template_id);
        await catalog.deleteTemplate(caller!.tenantId, params.template_id);
        return { status: 204 };
      },
    }),
  ];
}
