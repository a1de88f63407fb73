import { z } from 'zod';
import type { AccountControl } from '../../../core/billing/account-control.ts';
import type { BillingService } from '../../../core/billing/billing-service.ts';
import type { SweepService } from '../../../core/sweep/sweep-service.ts';
import { defineRoute, type RouteDef } from '../route.ts';
import {
  ChargeCreate,
  CreditCreate,
  DepositIdParams,
  DepositOut,
  HoldCreate,
  LedgerEntryOut,
  SweepOut,
  sweepOut,
  OperatorAccountOut,
  OperatorDepositsQuery,
  TenantIdParams,
  depositOut,
  ledgerEntryOut,
  operatorAccountOut,
} from '../schemas/billing.ts';

const operator = { kind: 'operator' } as const;

/** The back office: every account, fund requests and their decisions, credits and manual charges. */
export function operatorRoutes(service: BillingService, control: AccountControl, sweep: SweepService): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/operator/tenants/{tenant_id}/hold',
      operationId: 'operatorHold',
      summary: 'Hold an account: every machine stops at once and only an operator can reopen renting',
      tags: ['operator'],
      access: operator,
      params: TenantIdParams,
      body: HoldCreate,
      bodyOptional: true,
      responses: [{ status: 200, description: 'The account, on hold', schema: OperatorAccountOut }],
      async handle({ params, body }) {
        await control.hold(params.tenant_id, body.reason ?? null);
        return { status: 200, body: operatorAccountOut(await service.operatorAccount(params.tenant_id)) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/operator/tenants/{tenant_id}/resume',
      operationId: 'operatorResume',
      summary: 'Lift any pause: hold, emergency stop or tripped breaker',
      tags: ['operator'],
      access: operator,
      params: TenantIdParams,
      responses: [{ status: 200, description: 'The account, renting open', schema: OperatorAccountOut }],
      async handle({ params }) {
        await control.operatorResume(params.tenant_id);
        return { status: 200, body: operatorAccountOut(await service.operatorAccount(params.tenant_id)) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/operator/sweep',
      operationId: 'operatorSweep',
      summary: 'Run the billing sweep now (it also runs every minute by itself)',
      tags: ['operator'],
      access: operator,
      responses: [{ status: 200, description: 'What the pass did', schema: SweepOut }],
      async handle() {
        return { status: 200, body: sweepOut(await sweep.run()) };
      },
    }),
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
      responses: [
        { status: 201, description: 'The ledger entry', schema: LedgerEntryOut },
        { status: 404, description: 'No such tenant' },
      ],
      async handle({ body }) {
        return { status: 201, body: ledgerEntryOut(await service.charge(body.tenant_id, body.amount_usd, body.reason)) };
      },
    }),
  ];
}
