import { z } from 'zod';
import type { MeteringService } from '../../../core/metering/metering-service.ts';
import { defineRoute, type RouteDef } from '../route.ts';
import { ErrorOut } from '../schemas/common.ts';
import {
  SettleOut,
  UsageIngest,
  UsagePeriodOut,
  UsageQuery,
  UsageRecordOut,
  UsageSummaryQuery,
  settleOut,
  usagePeriodOut,
  usageRecordOut,
} from '../schemas/metering.ts';

const billing = { kind: 'bearer', scope: 'billing' } as const;

/** Metering: usage in, records and summaries out, settlement to the ledger; all under billing. */
export function meteringRoutes(metering: MeteringService): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/metering/usage',
      operationId: 'ingestUsage',
      summary: 'Report usage of a priced kind; owed at once, settled to the ledger while the balance covers it',
      tags: ['metering'],
      access: billing,
      body: UsageIngest,
      responses: [
        {
          status: 201,
          description: 'The usage record (Idempotent-Replayed: true on a retry)',
          schema: UsageRecordOut,
          headers: { 'Idempotent-Replayed': z.literal('true').optional().meta({ description: 'Present on a retry with the same idempotency_key: this is the record made the first time.' }) },
        },
        { status: 409, description: 'The idempotency key was used for another body', schema: ErrorOut },
      ],
      async handle({ caller, body }) {
        const { record, replayed } = await metering.ingest(caller!.tenantId, {
          resourceKind: body.resource_kind,
          quantity: body.quantity,
          idempotencyKey: body.idempotency_key ?? null,
          startedAt: body.started_at ?? null,
          endedAt: body.ended_at ?? null,
          reference: body.reference ?? null,
        });
        return { status: 201, body: usageRecordOut(record), ...(replayed && { headers: { 'idempotent-replayed': 'true' } }) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/metering/usage',
      operationId: 'listUsage',
      summary: 'Usage records, newest first (by started_at)',
      tags: ['metering'],
      access: billing,
      query: UsageQuery,
      responses: [{ status: 200, description: 'Usage records', schema: z.array(UsageRecordOut) }],
      async handle({ caller, query }) {
        const records = await metering.list(caller!.tenantId, {
          limit: query.limit,
          ...(query.resource_kind !== undefined && { resourceKind: query.resource_kind }),
          ...(query.since !== undefined && { since: query.since }),
          ...(query.until !== undefined && { until: query.until }),
        });
        return { status: 200, body: records.map(usageRecordOut) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/metering/summary',
      operationId: 'getUsageSummary',
      summary: 'Usage bucketed by month or ISO week (UTC, by started_at), newest first, per kind',
      tags: ['metering'],
      access: billing,
      query: UsageSummaryQuery,
      responses: [{ status: 200, description: 'Periods', schema: z.array(UsagePeriodOut) }],
      async handle({ caller, query }) {
        const periods = await metering.summary(caller!.tenantId, query.granularity, {
          limit: query.limit,
          ...(query.year !== undefined && { year: query.year }),
        });
        return { status: 200, body: periods.map(usagePeriodOut) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/metering/settle',
      operationId: 'settleUsage',
      summary: 'Post unsettled usage to the ledger now, oldest first, while the balance covers each record',
      tags: ['metering'],
      access: billing,
      responses: [{ status: 200, description: 'What was settled, and what is still owed', schema: SettleOut }],
      async handle({ caller }) {
        return { status: 200, body: settleOut(await metering.settle(caller!.tenantId)) };
      },
    }),
  ];
}
