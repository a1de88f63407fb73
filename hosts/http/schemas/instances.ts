import { z } from 'zod';
import { sshUserOf } from '../../../adapters/providers/registry.ts';
import { MAX_RECOVERY_ATTEMPTS } from '../../../core/recovery/recovery.ts';
import type { Instance } from '../../../core/rentals/instance.ts';
import type { RentalFigures, RentalQuote } from '../../../core/quotes/quote.ts';
import { dateTime, dateTimeOut, EXAMPLE_TIME, exampleId, isoOrNull, resourceId } from './common.ts';
import { EXAMPLE_SSH_PUBLIC_KEY, sshPublicKeyField, TemplateSearchIn, TemplateUpdate } from './catalog.ts';

const RecoveryIn = z
  .strictObject({
    max_attempts: z.int().min(1).max(MAX_RECOVERY_ATTEMPTS).meta({ description: `Replacements rented at most, one after each loss (1-${MAX_RECOVERY_ATTEMPTS}).` }),
  })
  .meta({
    id: 'RecoveryIn',
    description:
      "Managed recovery: when the machine is lost upstream, preempted or fails at its provider, the sweep rents the cheapest node of the same GPUs with at least its CPUs, RAM and disk, at no more than this machine's per-GPU rate (a rental by search: its max_price_per_gpu_hour), under the token's cap and the same window end, with the same options (volumes only at the same provider and region).",
    examples: [{ max_attempts: 3 }],
  });

const RecoveryOut = z
  .object({
    max_attempts: z.int(),
    attempts_left: z.int().meta({ description: 'Replacements still allowed after this machine.' }),
    failure: z.string().nullable().meta({ description: 'Why this machine was not replaced (no matching node within the rate or the cap, no attempts left...); it is not tried again.' }),
    left_volume_ids: z.array(z.string()).meta({ description: 'Volumes of the machine this one replaced that it did not take: they stay at their provider and region.' }),
  })
  .meta({ id: 'RecoveryOut', examples: [{ max_attempts: 3, attempts_left: 2, failure: null, left_volume_ids: [] }] });

export const InstanceCreate = z
  .strictObject({
    node_id: z.string().trim().min(3).max(200).optional().meta({
      examples: ['sandbox:100123'],
      description: 'A node id from GET /v1/gpus, e.g. sandbox:100123. Send exactly one of node_id, search and quote_id; with none, template_id must name a template with a search: its cheapest match is rented.',
    }),
    search: TemplateSearchIn.optional().meta({
      description:
        'GET /v1/gpus filters (all but limit), as JSON values: the cheapest match whose live price is verified and at or under max_price_per_gpu_hour is rented, the next ones tried (at most 5) when one is gone or dearer now; the instance names the node_id chosen.',
    }),
    quote_id: resourceId('quo').optional().meta({
      description: "A quote from POST /v1/quotes (valid 120 s, used once): its node for its hours at no more than its rate; 409 code PRICE_CHANGED when the price rose. Don't send node_id, search or other termination_hours.",
    }),
    dry_run: z.boolean().optional().meta({
      description: 'true: answer 200 with what this request would charge, commit and leave of the cap, passing every check, and change nothing (nor take the idempotency_key).',
    }),
    name: z.string().trim().max(200).optional(),
    // the check of a saved key (POST /v1/ssh-keys): the same parser, the same reasons
    ssh_public_key: sshPublicKeyField().optional(),
    termination_hours: z.int().min(1).max(8_760).optional().meta({
      description: 'Shutdown window: the machine is removed this many hours after creation. Required for a token with a spend cap.',
    }),
    idempotency_key: z.string().min(1).max(200).optional().meta({ description: 'Retry with the same key and body to get the same instance, never a second rental.' }),
    ssh_key_id: resourceId('key').optional().meta({ description: 'One of your saved SSH keys (POST /v1/ssh-keys), installed beside ssh_public_key.' }),
    image_id: resourceId('img').optional().meta({ description: 'One of your images (POST /v1/images): the container the machine runs.' }),
    template_id: resourceId('tpl').optional().meta({ description: 'A saved template (POST /v1/templates); fields sent here win over its own.' }),
    volume_ids: TemplateUpdate.shape.volume_ids.meta({ description: 'Your volumes to attach: same provider and region as the node.' }),
    env: TemplateUpdate.shape.env,
    ports: TemplateUpdate.shape.ports,
    startup_script: TemplateUpdate.shape.startup_script,
    recovery: RecoveryIn.optional(),
  })
  .meta({
    id: 'InstanceCreate',
    examples: [
      { node_id: 'sandbox:100123', name: 'trainer', ssh_public_key: EXAMPLE_SSH_PUBLIC_KEY, termination_hours: 4, idempotency_key: 'trainer-2026-11-21-1' },
      { node_id: 'sandbox:100123', name: 'trainer', termination_hours: 8, idempotency_key: 'trainer-2026-11-21-2', recovery: { max_attempts: 3 } },
      { search: { gpu_type: 'H100', gpu_count: 1, max_price_per_gpu_hour: 2.5 }, name: 'trainer', termination_hours: 4, idempotency_key: 'trainer-2026-11-21-2' },
      { quote_id: exampleId('quo'), ssh_key_id: exampleId('key'), idempotency_key: 'trainer-2026-11-21-3' },
      { search: { gpu_type: 'H100', max_price_per_gpu_hour: 2.5 }, termination_hours: 4, dry_run: true },
    ],
  });

const figures = {
  node_id: z.string().meta({ description: 'The node it rents: the one named, or the cheapest match of the search now.' }),
  rate_cents_per_hour: z.int().meta({ description: 'The whole machine, an hour, as it is charged.' }),
  price_per_gpu_hour_cents: z.int(),
  charged_now_cents: z.int().meta({ description: 'What the rental charges at once: its first hour.' }),
  commitment_cents: z.int().meta({ description: "What it commits on the token's spend cap: rate x termination_hours (1 hour without them)." }),
  cap_remaining_after_cents: z.int().nullable().meta({ description: "What the token's tightest spend cap leaves once it commits; null without a cap." }),
};

const EXAMPLE_FIGURES = {
  node_id: 'sandbox:100123',
  rate_cents_per_hour: 245,
  price_per_gpu_hour_cents: 245,
  charged_now_cents: 245,
  commitment_cents: 980,
  cap_remaining_after_cents: 4_020,
};

export const RentalDryRunOut = z.object(figures).meta({ id: 'RentalDryRunOut', description: 'What the rental would do (dry_run): nothing was charged, committed or kept.', examples: [EXAMPLE_FIGURES] });

export const QuoteCreate = z
  .strictObject({
    node_id: InstanceCreate.shape.node_id.meta({ description: 'A node id from GET /v1/gpus; or send search.' }),
    search: InstanceCreate.shape.search.meta({ description: 'GET /v1/gpus filters (all but limit), as JSON values: the cheapest match whose live price is verified and within max_price_per_gpu_hour; or send node_id.' }),
    termination_hours: InstanceCreate.shape.termination_hours.meta({ description: 'The hours the rental is for (its shutdown window), as on POST /v1/instances; required for a token with a spend cap.' }),
    name: InstanceCreate.shape.name.meta({ description: "The rental's name, unless POST /v1/instances sends one." }),
  })
  .meta({
    id: 'QuoteCreate',
    examples: [
      { node_id: 'sandbox:100123', termination_hours: 4, name: 'trainer' },
      { search: { gpu_type: 'H100', max_price_per_gpu_hour: 2.5 }, termination_hours: 4 },
    ],
  });

export const QuoteOut = z
  .object({
    id: z.string(),
    ...figures,
    termination_hours: z.int().nullable(),
    expires_at: dateTimeOut().meta({ description: 'Rent with quote_id before this (120 s after the quote).' }),
  })
  .meta({ id: 'QuoteOut', examples: [{ id: exampleId('quo'), ...EXAMPLE_FIGURES, termination_hours: 4, expires_at: EXAMPLE_TIME }] });

export const figuresOut = (f: RentalFigures): z.input<typeof RentalDryRunOut> => ({
  node_id: f.nodeId,
  rate_cents_per_hour: f.rateCentsPerHour,
  price_per_gpu_hour_cents: f.perGpuCents,
  charged_now_cents: f.chargedNowCents,
  commitment_cents: f.commitmentCents,
  cap_remaining_after_cents: f.capRemainingAfterCents,
});

export const quoteOut = (q: RentalQuote): z.input<typeof QuoteOut> => ({ id: q.id, ...figuresOut(q), termination_hours: q.terminationHours, expires_at: q.expiresAt.toISOString() });

export const ScheduleRemovalRequest = z
  .strictObject({ removal_scheduled_at: dateTime().meta({ description: 'ISO 8601, in the future.' }) })
  .meta({ id: 'ScheduleRemovalRequest', examples: [{ removal_scheduled_at: EXAMPLE_TIME }] });

export const InstanceIdParams = z.object({ instance_id: resourceId('ins') });

export const InstanceOut = z
  .object({
    id: z.string(),
    tenant_id: z.string(),
    node_id: z.string(),
    provider: z.string(),
    name: z.string().nullable(),
    status: z.enum(['provisioning', 'running', 'rebooting', 'terminating', 'terminated', 'failed']),
    gpu_type: z.string(),
    gpu_count: z.int(),
    rate_cents_per_hour: z.int(),
    charged_cents: z.int().meta({ description: 'What the rental has cost so far (charges minus refunds).' }),
    created_at: dateTimeOut(),
    started_at: dateTimeOut().nullable(),
    paid_until: dateTimeOut(),
    removal_scheduled_at: dateTimeOut().nullable(),
    window_ends_at: dateTimeOut().nullable().meta({ description: 'End of the shutdown window (termination_hours).' }),
    terminated_at: dateTimeOut().nullable(),
    ssh_host: z.string().nullable(),
    ssh_port: z.int().nullable(),
    ssh_user: z.string().nullable().meta({
      description: 'The user to log in as: `ssh -p <ssh_port> <ssh_user>@<ssh_host>`. Stated by its provider (root on the container clouds), or by its machine where the provider states one per machine (a reseller of other clouds); null for a provider this server does not know.',
      examples: ['root'],
    }),
    idempotency_key: z.string().nullable(),
    failure: z.string().nullable().meta({ description: 'Why the rental failed (status failed); it cost nothing.' }),
    image: z.string().nullable().meta({ description: 'The container image it runs, when one was asked for.' }),
    template_id: z.string().nullable(),
    ssh_key_id: z.string().nullable(),
    volume_ids: z.array(z.string()),
    supported_operations: z.array(z.string()),
    replaces: z.string().nullable().meta({ description: 'The instance this one replaced (managed recovery).' }),
    replaced_by: z.string().nullable().meta({ description: 'The instance rented to replace this one after it was lost, preempted or failed (managed recovery).' }),
    recovery: RecoveryOut.nullable().meta({ description: 'Its managed recovery; null when none was asked for.' }),
  })
  .meta({ id: 'InstanceOut' });

export const instanceOut = (i: Instance, supportedOperations: string[]): z.input<typeof InstanceOut> => ({
  id: i.id,
  tenant_id: i.tenantId,
  node_id: i.nodeId,
  provider: i.provider,
  name: i.name,
  status: i.status,
  gpu_type: i.gpuType,
  gpu_count: i.gpuCount,
  rate_cents_per_hour: i.rateCentsPerHour,
  charged_cents: i.chargedCents,
  created_at: i.createdAt.toISOString(),
  started_at: isoOrNull(i.startedAt),
  paid_until: i.paidUntil.toISOString(),
  removal_scheduled_at: isoOrNull(i.removalScheduledAt),
  window_ends_at: isoOrNull(i.windowEndsAt),
  terminated_at: isoOrNull(i.terminatedAt),
  ssh_host: i.sshHost,
  ssh_port: i.sshPort,
  ssh_user: i.sshUser ?? sshUserOf(i.provider),
  idempotency_key: i.idempotencyKey,
  failure: i.failure,
  image: i.image,
  template_id: i.templateId,
  ssh_key_id: i.sshKeyId,
  volume_ids: i.volumeIds,
  supported_operations: supportedOperations,
  replaces: i.recovery?.replaces ?? null,
  replaced_by: i.recovery?.replacedBy ?? null,
  recovery: i.recovery && { max_attempts: i.recovery.maxAttempts, attempts_left: i.recovery.attemptsLeft, failure: i.recovery.failure, left_volume_ids: i.recovery.leftVolumeIds },
});
