import { z } from 'zod';
import { defineRoute, type RouteDef } from '../route.ts';

export const HealthOut = z.object({ status: z.literal('ok'), version: z.string() }).meta({ id: 'HealthOut' });

/** Liveness and the API description; the OpenAPI document is built once from the final route table. */
export function metaRoutes(version: string, openApi: () => object): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/healthz',
      operationId: 'healthz',
      summary: 'Liveness',
      tags: ['meta'],
      access: { kind: 'public' },
      unlimited: true,
      responses: [{ status: 200, description: 'The process answers', schema: HealthOut }],
      async handle() {
        return { status: 200, body: { status: 'ok', version } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/openapi.json',
      operationId: 'openapi',
      summary: 'This API, described in OpenAPI 3.1',
      tags: ['meta'],
      access: { kind: 'public' },
      database: false,
      responses: [{ status: 200, description: 'The OpenAPI document', schema: z.object({}).passthrough().meta({ id: 'OpenApiDocument' }) }],
      async handle() {
        return { status: 200, body: openApi() };
      },
    }),
  ];
}
