import { z } from 'zod';
import type { BillingService } from '../../../core/billing/billing-service.ts';
import { defineRoute, type RouteDef } from '../route.ts';
import {
  ChargeCreate,
  CreditCreate,
  DepositIdParams,
  DepositOut,
  LedgerEntryOut,
  OperatorAccountOut,
  OperatorDepositsQuery,
  TenantIdParams,
  depositOut,
  ledgerEntryOut,
  operatorAccountOut,
} from '../schemas/billing.ts';

const operator = { kind: 'operator' } as const;

/** The back office: every account, fund requests and their decisions, credits and manual charges. */
export function operatorRoutes(service: BillingService): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/operator/accounts',
      operationId: 'operatorListAccounts',
      summary: 'Every account: balance, burn, breaker, waiting fund requests',
      tags: ['operator'],
      access: operator,
      responses: [{ status: 200, description: 'Accounts', schema: z.array(OperatorAccountOut) }],
      async handle() {
        return { status: 200, body: (await service.operatorAccounts()).map(operatorAccountOut) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/operator/deposits',
      operationId: 'operatorListDeposits',
      summary: 'Deposits of every tenant with a status (default pending), oldest first',
      tags: ['operator'],
      access: operator,
      query: OperatorDepositsQuery,
      responses: [{ status: 200, description: 'Deposits', schema: z.array(DepositOut) }],
      async handle({ query }) {
        return { status: 200, body: (await service.depositsByStatus(query.status)).map(depositOut) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/billing/deposits/{deposit_id}/confirm',
      operationId: 'confirmDeposit',
      summary: 'Confirm a pending deposit: its amount is credited, once',
      tags: ['operator'],
      access: operator,
      params: DepositIdParams,
      responses: [
        { status: 200, description: 'Confirmed and credited', schema: DepositOut },
        { status: 409, description: 'Already decided' },
      ],
      async handle({ params }) {
        return { status: 200, body: depositOut(await service.confirmDeposit(params.deposit_id)) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/billing/deposits/{deposit_id}/reject',
      operationId: 'rejectDeposit',
      summary: 'Reject a pending deposit; nothing is credited',
      tags: ['operator'],
      access: operator,
      params: DepositIdParams,
      responses: [
        { status: 200, description: 'Rejected', schema: DepositOut },
        { status: 409, description: 'Already decided' },
      ],
      async handle({ params }) {
        return { status: 200, body: depositOut(await service.rejectDeposit(params.deposit_id)) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/operator/tenants/{tenant_id}/credit',
      operationId: 'operatorCredit',
      summary: 'Add funds at once, recorded as a confirmed deposit',
      tags: ['operator'],
      access: operator,
      params: TenantIdParams,
      body: CreditCreate,
      responses: [{ status: 201, description: 'The credit, as a deposit record', schema: DepositOut }],
      async handle({ params, body }) {
        return { status: 201, body: depositOut(await service.credit(params.tenant_id, body.amount_usd, body.reason)) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/billing/charges',
      operationId: 'createCharge',
      summary: 'A manual charge against one tenant (operators only)',
      tags: ['operator'],
      access: operator,
      body: ChargeCreate,
      responses: [{ status: 201, description: 'The ledger entry', schema: LedgerEntryOut }],
      async handle({ body }) {
        return { status: 201, body: ledgerEntryOut(await service.charge(body.tenant_id, body.amount_usd, body.reason)) };
      },
    }),
  ];
}
