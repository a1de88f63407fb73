import { z } from 'zod';
import type { ReadinessReport } from '../../composition/readiness.ts';
import { defineRoute, PROMETHEUS_TEXT, type RouteDef } from '../route.ts';

const Check = z.object({ ok: z.boolean(), detail: z.string() }).meta({ id: 'ReadinessCheck' });
const Checks = z
  .object({
    database: Check,
    migrations: Check,
    snapshots: Check,
    redis: Check.optional().meta({ description: 'With REDIS_URL: both connections up. Not ok makes the replica `degraded`, not unready' }),
  })
  .meta({ id: 'ReadinessChecks' });

export const ReadyOut = z
  .object({ status: z.enum(['ready', 'degraded']), checks: Checks })
  .meta({ id: 'ReadyOut', description: '`degraded`: ready, but Redis is not reached (rate limits counted per replica, tokens read from the database)' });
export const NotReadyOut = z
  .object({ detail: z.string(), status: z.literal('not_ready'), checks: Checks })
  .meta({ id: 'NotReadyOut', description: '`detail` names each failing check; `checks` has them all' });

/** Readiness for load balancers (no credential, never rate limited) and metrics for scrapers. */
export function monitoringRoutes(ready: () => Promise<ReadinessReport>, metrics: { render(): Promise<string> }, metricsToken: string | null): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/readyz',
      operationId: 'readyz',
      summary: 'Readiness: the database answers, migrations are current, market snapshots are present (Redis reached, or degraded)',
      tags: ['meta'],
      access: { kind: 'public' },
      unlimited: true,
      responses: [
        { status: 200, description: 'Ready for traffic', schema: ReadyOut },
        { status: 503, description: 'Not ready: the failing checks', schema: NotReadyOut },
      ],
      async handle() {
        const { ready: ok, degraded, checks } = await ready();
        if (ok) return { status: 200, body: { status: degraded ? 'degraded' : 'ready', checks } };
        const failing = Object.entries(checks)
          .filter(([name, check]) => !check.ok && name !== 'redis')
          .map(([name, check]) => `${name}: ${check.detail}`);
        return { status: 503, body: { detail: `not ready: ${failing.join('; ')}`, status: 'not_ready', checks } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/metrics',
      operationId: 'metrics',
      summary: 'Metrics in the Prometheus text format',
      tags: ['meta'],
      access: { kind: 'monitoring', metricsToken },
      database: false,
      responses: [{ status: 200, description: 'Every metric of this process (docs/operations.md lists them)', schema: z.string(), contentType: PROMETHEUS_TEXT }],
      async handle() {
        return { status: 200, raw: { contentType: PROMETHEUS_TEXT, text: await metrics.render() } };
      },
    }),
  ];
}
