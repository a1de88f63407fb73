import { z } from 'zod';
import type { AccountControl } from '../../../core/billing/account-control.ts';
import type { BillingService } from '../../../core/billing/billing-service.ts';
import type { PaymentsService } from '../../../core/billing/payments/payments-service.ts';
import { defineRoute, type RouteDef } from '../route.ts';
import {
  AccountOut,
  AutoRechargeUpdate,
  BalanceOut,
  CheckoutCreate,
  CheckoutOut,
  SessionIdParams,
  BillingPeriodOut,
  DepositCreate,
  DepositOut,
  LedgerEntryOut,
  LedgerQuery,
  StopCreate,
  StopOut,
  SummaryQuery,
  stopOut,
  accountOut,
  balanceOut,
  billingPeriodOut,
  depositOut,
  ledgerEntryOut,
} from '../schemas/billing.ts';

const billing = { kind: 'bearer', scope: 'billing' } as const;

/** The tenant's own account, under the billing scope: figures, deposits, ledger and summaries. */
export function billingRoutes(service: BillingService, control: AccountControl, payments: PaymentsService): RouteDef[] {
  const accountBody = async (tenantId: string) =>
    accountOut(await service.account(tenantId), {
      maxPaymentsPer24h: payments.settings.maxPaymentsPer24h,
      paymentsLast24h: await payments.paymentsLast24h(tenantId),
    });
  return [
    defineRoute({
      method: 'post',
      path: '/v1/billing/stop',
      operationId: 'emergencyStop',
      summary: 'Emergency stop: every machine stops at once (disks deleted, volumes kept) and renting pauses',
      tags: ['billing'],
      access: billing,
      body: StopCreate,
      bodyOptional: true,
      responses: [{ status: 200, description: 'Stopped', schema: StopOut }],
      async handle({ caller, body }) {
        return { status: 200, body: stopOut(await control.stop(caller!.tenantId, body.reason ?? null)) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/billing/resume',
      operationId: 'resumeRentals',
      summary: 'Reopen renting after an emergency stop, a tripped breaker once funds are in, a budget stop in a new month or above a raised budget (an operator hold: 409)',
      tags: ['billing'],
      access: billing,
      responses: [
        { status: 200, description: 'The account, renting open', schema: AccountOut },
        { status: 409, description: 'An operator hold, no funds available yet after a tripped breaker, or the monthly budget still spent after a budget stop' },
        { status: 403, description: 'After a budget stop, a credential that is not root (ROOT_REQUIRED): the budget is root\'s to decide' },
      ],
      async handle({ caller }) {
        await control.resume(caller!);
        return { status: 200, body: await accountBody(caller!.tenantId) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/billing/account',
      operationId: 'getAccount',
      summary: 'The account: balance, owed, available, burn, stops_at, rentals, pause',
      tags: ['billing'],
      access: billing,
      responses: [{ status: 200, description: 'The account', schema: AccountOut }],
      async handle({ caller }) {
        return { status: 200, body: await accountBody(caller!.tenantId) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/billing/balance',
      operationId: 'getBalance',
      summary: 'Balance, owed and available, in cents',
      tags: ['billing'],
      access: billing,
      responses: [{ status: 200, description: 'The balance', schema: BalanceOut }],
      async handle({ caller }) {
        return { status: 200, body: balanceOut(await service.account(caller!.tenantId)) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/billing/deposits',
      operationId: 'createDeposit',
      summary: 'Ask to fund the account by bank transfer; credits nothing until an operator confirms it',
      tags: ['billing'],
      access: billing,
      body: DepositCreate,
      responses: [{ status: 201, description: 'The pending fund request', schema: DepositOut }],
      async handle({ caller, body }) {
        return { status: 201, body: depositOut(await service.requestDeposit(caller!.tenantId, body.amount_usd, body.reference ?? null)) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/billing/deposits',
      operationId: 'listDeposits',
      summary: "The account's deposits, newest first",
      tags: ['billing'],
      access: billing,
      responses: [{ status: 200, description: 'Deposits', schema: z.array(DepositOut) }],
      async handle({ caller }) {
        return { status: 200, body: (await service.deposits(caller!.tenantId)).map(depositOut) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/billing/ledger',
      operationId: 'listLedger',
      summary: 'Ledger entries, newest first; they sum to the balance',
      tags: ['billing'],
      access: billing,
      query: LedgerQuery,
      responses: [{ status: 200, description: 'Ledger entries', schema: z.array(LedgerEntryOut) }],
      async handle({ caller, query }) {
        return { status: 200, body: (await service.ledger(caller!.tenantId, query.limit)).map(ledgerEntryOut) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/billing/summary',
      operationId: 'getBillingSummary',
      summary: 'The ledger bucketed by month or ISO week (UTC), newest first',
      tags: ['billing'],
      access: billing,
      query: SummaryQuery,
      responses: [{ status: 200, description: 'Periods', schema: z.array(BillingPeriodOut) }],
      async handle({ caller, query }) {
        const periods = await service.summary(caller!.tenantId, query.granularity, {
          limit: query.limit,
          ...(query.year !== undefined && { year: query.year }),
        });
        return { status: 200, body: periods.map(billingPeriodOut) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/billing/checkout',
      operationId: 'createCheckout',
      summary: 'Add funds by card: answers the checkout page to send the payer to; the card is saved for auto-recharge',
      tags: ['billing'],
      access: billing,
      body: CheckoutCreate,
      responses: [
        { status: 201, description: 'The checkout', schema: CheckoutOut },
        { status: 503, description: 'The card processor did not open a checkout; nothing was charged' },
      ],
      async handle({ caller, body }) {
        const { deposit, url } = await payments.checkout(caller!.tenantId, body.amount_usd);
        return { status: 201, body: { session_id: deposit.sessionId!, url, amount_cents: deposit.amountCents, status: deposit.status, deposit_id: deposit.id } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/v1/billing/checkout/{session_id}/sync',
      operationId: 'syncCheckout',
      summary: 'Ask the processor how a checkout went (call it when the payer returns); credits once when paid',
      tags: ['billing'],
      access: billing,
      params: SessionIdParams,
      responses: [
        { status: 200, description: 'The checkout deposit', schema: DepositOut },
        { status: 503, description: 'The card processor did not answer; try again' },
      ],
      async handle({ caller, params }) {
        return { status: 200, body: depositOut(await payments.sync(caller!.tenantId, params.session_id)) };
      },
    }),
    defineRoute({
      method: 'put',
      path: '/v1/billing/auto-recharge',
      operationId: 'updateAutoRecharge',
      summary: 'Charge the saved card amount_usd whenever the balance falls under threshold_usd (at most the 24 h limit)',
      tags: ['billing'],
      access: billing,
      body: AutoRechargeUpdate,
      responses: [
        { status: 200, description: 'The account', schema: AccountOut },
        { status: 409, description: 'No saved card yet' },
      ],
      async handle({ caller, body }) {
        await payments.setAutoRecharge(caller!.tenantId, { enabled: body.enabled, thresholdCents: body.threshold_usd ?? null, amountCents: body.amount_usd ?? null });
        return { status: 200, body: await accountBody(caller!.tenantId) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/billing/card',
      operationId: 'forgetCard',
      summary: 'Forget the saved card; auto-recharge turns off',
      tags: ['billing'],
      access: billing,
      responses: [
        { status: 200, description: 'The account', schema: AccountOut },
        { status: 503, description: 'The card processor did not answer; the card is still saved' },
      ],
      async handle({ caller }) {
        await payments.forgetCard(caller!.tenantId);
        return { status: 200, body: await accountBody(caller!.tenantId) };
      },
    }),
  ];
}
