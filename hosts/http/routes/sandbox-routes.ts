import { z } from 'zod';
import type { SandboxChaos, ChaosOutcome } from '../../composition/sandbox-chaos.ts';
import { defineRoute, type RouteDef } from '../route.ts';
import { InstanceIdParams } from '../schemas/instances.ts';

const operator = { kind: 'operator' } as const;
const tags = ['operator'];

const SandboxEventOut = z
  .object({
    event: z.enum(['lost', 'preempted', 'repriced']),
    instance_id: z.string().optional(),
    machine_id: z.string().optional().meta({ description: "The sandbox's own machine id." }),
    node_id: z.string().optional(),
    gpu_count: z.int().optional(),
    price_per_gpu_hour_usd: z.string().optional(),
    price_per_hour_usd: z.string().optional().meta({ description: 'The whole machine, as the sandbox now lists it.' }),
  })
  .meta({ id: 'SandboxEventOut' });

const SandboxPriceIn = z
  .strictObject({
    price_per_gpu_hour_usd: z
      .union([z.string(), z.number()])
      .transform((value) => String(value))
      .meta({ description: 'The offer\'s new on-demand price per GPU-hour, upstream USD (before markup), at most 4 decimals.' }),
  })
  .meta({ id: 'SandboxPriceIn', examples: [{ price_per_gpu_hour_usd: '2.35' }] });

const NodeIdParams = z.object({
  node_id: z
    .string()
    .max(200)
    .regex(/^[a-z][a-z0-9_-]*:[A-Za-z0-9._~-]+$/, 'must be a node id from GET /v1/gpus, like sandbox:o123')
    .meta({ description: 'A sandbox node id from GET /v1/gpus, e.g. sandbox:100123.', examples: ['sandbox:100123'] }),
});

const eventOut = (o: ChaosOutcome): z.input<typeof SandboxEventOut> =>
  o.event === 'repriced'
    ? { event: o.event, node_id: o.nodeId, gpu_count: o.gpuCount, price_per_gpu_hour_usd: o.pricePerGpuHourUsd, price_per_hour_usd: o.pricePerHourUsd }
    : { event: o.event, instance_id: o.instanceId, machine_id: o.machineId };

/** Chaos at the sandbox, for rehearsing recovery, preemption and price moves before a real cloud (only with the sandbox on). */
export function sandboxRoutes(chaos: SandboxChaos): RouteDef[] {
  const machine = (action: 'lose' | 'preempt', summary: string, conflict: string) =>
    defineRoute({
      method: 'post',
      path: `/v1/operator/sandbox/machines/{instance_id}/${action}`,
      operationId: action === 'lose' ? 'sandboxLoseMachine' : 'sandboxPreemptMachine',
      summary,
      tags,
      access: operator,
      params: InstanceIdParams,
      responses: [
        { status: 200, description: 'Done at the sandbox; the sweep sees it on its next pass', schema: SandboxEventOut },
        { status: 409, description: conflict },
      ],
      async handle({ params }) {
        return { status: 200, body: eventOut(await (action === 'lose' ? chaos.lose(params.instance_id) : chaos.preempt(params.instance_id))) };
      },
    });
  return [
    machine('lose', "The instance's machine vanishes at the sandbox, as after a host failure", 'The instance is not at the sandbox or has no machine yet'),
    machine('preempt', "The instance's machine is taken back by the sandbox now (a spot machine, or an on-demand host reclaimed)", 'The instance has no live machine at the sandbox'),
    defineRoute({
      method: 'post',
      path: '/v1/operator/sandbox/offers/{node_id}/price',
      operationId: 'sandboxRepriceOffer',
      summary: "A sandbox offer's on-demand price moves, as upstream prices do (rentals check it live; searches see it at the next snapshot)",
      tags,
      access: operator,
      params: NodeIdParams,
      body: SandboxPriceIn,
      responses: [{ status: 200, description: 'The offer, repriced', schema: SandboxEventOut }],
      async handle({ params, body }) {
        return { status: 200, body: eventOut(await chaos.reprice(params.node_id, body.price_per_gpu_hour_usd)) };
      },
    }),
  ];
}
