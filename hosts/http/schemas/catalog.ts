import { z } from 'zod';
import { parseContainerReference } from '../../../core/catalog/container-reference.ts';
import { CATALOG_LIMITS as L } from '../../../core/catalog/limits.ts';
import type { Image, SshKey, Template, TemplateSearch } from '../../../core/catalog/records.ts';
import { parseSshPublicKey } from '../../../core/catalog/ssh-public-key.ts';
import { ENV_NAME } from '../../../core/catalog/template-rules.ts';
import { dateTimeOut, exampleId, madeByTokenIdOut, resourceId } from './common.ts';
import { filterFields } from './market.ts';

// ---- shared fields ------------------------------------------------------------------------------

/**
 * What every key line the parser accepts looks like (test/unit/document-patterns.test.ts holds it to that):
 * an accepted type, the base64 of a blob that starts with a 4-byte length (so "AAAA"), an optional comment;
 * spaces around it are trimmed. The parser checks the rest (the blob, the size) and says why.
 */
export const SSH_PUBLIC_KEY_PATTERN = '^\\s*(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521))[ \\t]+AAAA[A-Za-z0-9+/]+={0,3}([ \\t][^\\r\\n]*)?\\s*$';
export const EXAMPLE_SSH_PUBLIC_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl you@laptop';

/**
 * What every reference the parser accepts looks like: an optional registry host (name, IPv4 or [IPv6], with a
 * port), lower-case path components, a tag, a digest; the parser checks the rest and says why.
 */
export const IMAGE_REFERENCE_PATTERN =
  '^((([a-zA-Z0-9-]+)(\\.[a-zA-Z0-9-]+)*|\\[[0-9A-Fa-f:.]+\\])(:[0-9]{1,5})?/)?[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*(/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha(256|384|512):[0-9a-f]+)?$';
export const EXAMPLE_IMAGE = 'pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime';

const name = (what: string) => z.string().trim().min(1, 'must not be blank').max(L.name).meta({ description: `A name for the ${what}, yours to choose.` });

/**
 * An OpenSSH public key line, checked by the one parser (core/catalog/ssh-public-key.ts) that also checks a
 * rental's `ssh_public_key`: the reason it is refused is the message.
 */
export const sshPublicKeyField = () =>
  z
    .string()
    .max(L.publicKey)
    .superRefine((text, ctx) => {
      const parsed = parseSshPublicKey(text);
      if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.reason });
    })
    .transform((text) => text.trim())
    .meta({
      description: 'One OpenSSH public key line, e.g. the contents of ~/.ssh/id_ed25519.pub: ed25519, ECDSA (nistp256/384/521) or RSA of at least 2048 bits.',
      pattern: SSH_PUBLIC_KEY_PATTERN,
      examples: [EXAMPLE_SSH_PUBLIC_KEY],
    });

const containerReference = () =>
  z
    .string()
    .trim()
    .max(L.imageReference)
    .superRefine((text, ctx) => {
      const parsed = parseContainerReference(text);
      if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.reason });
    })
    .meta({
      description: 'A container image reference: [registry/]namespace/name[:tag][@sha256:digest], e.g. pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime.',
      pattern: IMAGE_REFERENCE_PATTERN,
      examples: [EXAMPLE_IMAGE],
    });

// ---- SSH keys -----------------------------------------------------------------------------------

export const SshKeyCreate = z
  .strictObject({ name: name('key'), public_key: sshPublicKeyField() })
  .meta({ id: 'SSHKeyCreate', examples: [{ name: 'laptop', public_key: EXAMPLE_SSH_PUBLIC_KEY }] });

export const SshKeyIdParams = z.object({ key_id: resourceId('key') });

export const SshKeyOut = z
  .object({
    id: z.string(),
    name: z.string(),
    public_key: z.string().meta({ description: 'The key line as saved: type, base64, comment, one space apart.' }),
    fingerprint: z.string().meta({ description: 'SHA256:<unpadded base64>, as `ssh-keygen -l` prints it.' }),
    made_by_token_id: madeByTokenIdOut(),
    created_at: dateTimeOut(),
  })
  .meta({ id: 'SSHKeyOut' });

export const sshKeyOut = (k: SshKey): z.input<typeof SshKeyOut> => ({
  id: k.id,
  name: k.name,
  public_key: k.publicKey,
  fingerprint: k.fingerprint,
  made_by_token_id: k.tokenId,
  created_at: k.createdAt.toISOString(),
});

// ---- images -------------------------------------------------------------------------------------

const registryUsername = () => z.string().min(1).max(L.registryUsername).nullable().meta({ description: 'For a private registry; null: none.' });
const registryPassword = () =>
  z.string().min(1).max(L.registryPassword).nullable().meta({ description: 'For a private registry: kept encrypted, never answered (see has_registry_password); null: none.' });
const command = () => z.string().max(L.command).nullable().meta({ description: "The container's command, instead of the image's own; null: the image's." });

export const ImageCreate = z
  .strictObject({
    name: name('image'),
    image: containerReference(),
    registry_username: registryUsername().optional(),
    registry_password: registryPassword().optional(),
    command: command().optional(),
  })
  .meta({ id: 'ImageCreate', examples: [{ name: 'pytorch', image: EXAMPLE_IMAGE, command: 'python train.py' }] });

export const ImageUpdate = z
  .strictObject({
    name: name('image').optional(),
    image: containerReference().optional(),
    registry_username: registryUsername().optional(),
    registry_password: registryPassword().optional().meta({ description: 'A new password; null removes it; left out: kept.' }),
    command: command().optional(),
  })
  .meta({ id: 'ImageUpdate', examples: [{ image: 'pytorch/pytorch:2.6.0-cuda12.4-cudnn9-runtime', registry_password: null }] });

export const ImageIdParams = z.object({ image_id: resourceId('img') });

export const ImageOut = z
  .object({
    id: z.string(),
    name: z.string(),
    image: z.string(),
    registry_username: z.string().nullable(),
    has_registry_password: z.boolean().meta({ description: 'A password is saved; it is never answered.' }),
    command: z.string().nullable(),
    made_by_token_id: madeByTokenIdOut(),
    created_at: dateTimeOut(),
  })
  .meta({ id: 'ImageOut' });

export const imageOut = (i: Image): z.input<typeof ImageOut> => ({
  id: i.id,
  name: i.name,
  image: i.image,
  registry_username: i.registryUsername,
  has_registry_password: i.registryPasswordSealed !== null,
  command: i.command,
  made_by_token_id: i.tokenId,
  created_at: i.createdAt.toISOString(),
});

// ---- templates ----------------------------------------------------------------------------------

type FilterName = keyof typeof filterFields;

/** A JSON number or boolean read as the query text GET /v1/gpus would get, then by that filter's own schema. */
const asQueryText = (value: unknown) => (typeof value === 'number' || typeof value === 'boolean' ? String(value) : value);

const searchShape = Object.fromEntries(
  Object.entries(filterFields).map(([filter, schema]) => [filter, z.preprocess(asQueryText, schema as z.ZodType).optional()]),
) as unknown as { [K in FilterName]: z.ZodOptional<z.ZodType<z.output<(typeof filterFields)[K]>, unknown>> };

type ParsedSearch = { [K in FilterName]?: z.output<(typeof filterFields)[K]> };

/**
 * A template's search as it is kept and answered: each filter as GET /v1/gpus reads it (numbers and booleans as
 * JSON values, text trimmed, the price ceiling in USD rounded up to the cent, extra_filters as its text).
 */
function keptSearch(parsed: ParsedSearch): TemplateSearch {
  const kept: Record<string, string | number | boolean> = {};
  for (const [filter, value] of Object.entries(parsed) as [FilterName, unknown][]) {
    if (value === undefined) continue;
    if (filter === 'max_price_per_gpu_hour') kept[filter] = (value as number) / 100;
    else if (filter === 'extra_filters') {
      const text = (value as { text: string }[]).map((f) => f.text).join(',');
      if (text) kept[filter] = text;
    } else kept[filter] = value as string | number | boolean;
  }
  return kept;
}

export const TemplateSearchIn = z
  .strictObject(searchShape)
  .transform((parsed) => keptSearch(parsed as ParsedSearch))
  .meta({ id: 'TemplateSearch', description: 'GET /v1/gpus filters (all but limit), as JSON values: the machine the template wants.' });

const templateFields = {
  image_id: resourceId('img').nullable().meta({ description: 'One of your images (POST /v1/images); or send image; or neither for the provider default.' }),
  image: containerReference().nullable().meta({ description: 'A container reference given directly, instead of image_id.' }),
  ssh_key_ids: z.array(resourceId('key')).max(L.sshKeysPerTemplate).meta({ description: 'Your saved SSH keys (POST /v1/ssh-keys) to install.' }),
  env: z
    .record(z.string().regex(ENV_NAME, 'a variable name is a letter or _, then letters, digits or _').max(L.envName), z.string().max(L.envValueBytes))
    .meta({ description: `Environment variables: at most ${L.envEntries}, each value at most ${L.envValueBytes} bytes.` }),
  ports: z.array(z.int().min(1).max(65_535)).max(L.ports).meta({ description: `Container ports to expose, each once (at most ${L.ports}).` }),
  startup_script: z.string().max(L.startupScriptBytes).nullable().meta({ description: `A shell script run once the machine is up, at most ${L.startupScriptBytes / 1024} kB.` }),
  termination_hours: z.int().min(1).max(L.terminationHours).nullable().meta({ description: 'Shutdown window of rentals from this template, as on POST /v1/instances.' }),
  volume_ids: z.array(resourceId('vol')).max(L.volumesPerTemplate).meta({ description: 'Volumes to attach (checked when a machine is rented).' }),
  search: TemplateSearchIn,
};

export const TemplateCreate = z
  .strictObject({
    name: name('template'),
    image_id: templateFields.image_id.optional(),
    image: templateFields.image.optional(),
    ssh_key_ids: templateFields.ssh_key_ids.default([]),
    env: templateFields.env.default({}),
    ports: templateFields.ports.default([]),
    startup_script: templateFields.startup_script.optional(),
    termination_hours: templateFields.termination_hours.optional(),
    volume_ids: templateFields.volume_ids.default([]),
    search: templateFields.search.default({}),
  })
  .meta({
    id: 'TemplateCreate',
    examples: [
      {
        name: 'trainer',
        image_id: exampleId('img'),
        ssh_key_ids: [exampleId('key')],
        env: { WANDB_PROJECT: 'llm' },
        ports: [8888],
        startup_script: 'pip install -r requirements.txt',
        termination_hours: 8,
        search: { gpu_type: 'H100', gpu_count: 8, max_price_per_gpu_hour: 2.5 },
      },
    ],
  });

export const TemplateUpdate = z
  .strictObject({
    name: name('template').optional(),
    ...Object.fromEntries(Object.entries(templateFields).map(([field, schema]) => [field, schema.optional()])),
  } as { name: z.ZodOptional<ReturnType<typeof name>> } & { [K in keyof typeof templateFields]: z.ZodOptional<(typeof templateFields)[K]> })
  .meta({
    id: 'TemplateUpdate',
    description: 'Fields left out are kept; null clears a nullable one; image_id or image replaces the other.',
    examples: [{ image: EXAMPLE_IMAGE, termination_hours: null, search: { gpu_type: 'A100', gpu_count: 1 } }],
  });

export const TemplateIdParams = z.object({ template_id: resourceId('tpl') });

const searchOutValue = z.union([z.string(), z.number(), z.boolean()]);

export const TemplateOut = z
  .object({
    id: z.string(),
    name: z.string(),
    image_id: z.string().nullable(),
    image: z.string().nullable(),
    ssh_key_ids: z.array(z.string()),
    env: z.record(z.string(), z.string()),
    ports: z.array(z.int()),
    startup_script: z.string().nullable(),
    termination_hours: z.int().nullable(),
    volume_ids: z.array(z.string()),
    search: z.record(z.string(), searchOutValue).meta({ description: 'GET /v1/gpus filters, as the search reads them.' }),
    made_by_token_id: madeByTokenIdOut(),
    created_at: dateTimeOut(),
  })
  .meta({ id: 'TemplateOut' });

export const templateOut = (t: Template): z.input<typeof TemplateOut> => ({
  id: t.id,
  name: t.name,
  image_id: t.imageId,
  image: t.image,
  ssh_key_ids: t.sshKeyIds,
  env: t.env,
  ports: t.ports,
  startup_script: t.startupScript,
  termination_hours: t.terminationHours,
  volume_ids: t.volumeIds,
  search: { ...t.search },
  made_by_token_id: t.tokenId,
  created_at: t.createdAt.toISOString(),
});
