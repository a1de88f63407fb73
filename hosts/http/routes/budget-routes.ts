import type { BudgetService } from '../../../core/billing/budgets/budget-service.ts';
import { defineRoute, type RouteDef } from '../route.ts';
import { BudgetOut, BudgetUpdate, budgetOut } from '../schemas/budget.ts';

const billing = { kind: 'bearer', scope: 'billing' } as const;
/** Writing the budget in any way is root's (docs/decisions.md, "One tree of authority"): an agent may not lift its own stop. */
const billingRoot = { kind: 'bearer', scope: 'billing', root: true } as const;

/** The tenant's monthly budget, under the billing scope (docs/decisions.md, "Monthly budgets"). */
export function budgetRoutes(budgets: BudgetService): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/billing/budget',
      operationId: 'getBudget',
      summary: "The monthly budget and this calendar month's (UTC) spend against it",
      tags: ['billing'],
      access: billing,
      responses: [
        { status: 200, description: 'The budget', schema: BudgetOut },
        { status: 404, description: 'No budget is set' },
      ],
      async handle({ caller }) {
        return { status: 200, body: budgetOut(await budgets.get(caller!.tenantId)) };
      },
    }),
    defineRoute({
      method: 'put',
      path: '/v1/billing/budget',
      operationId: 'setBudget',
      summary: 'Set the monthly budget: alerts (mail and budget.threshold_reached) at its percents, and a stop at 100 % if asked',
      tags: ['billing'],
      access: billingRoot,
      body: BudgetUpdate,
      responses: [{ status: 200, description: 'The budget', schema: BudgetOut }],
      async handle({ caller, body }) {
        return {
          status: 200,
          body: budgetOut(await budgets.set(caller!.tenantId, { monthlyCents: body.monthly_usd, alertPercents: body.alert_percents, stopAtLimit: body.stop_at_limit })),
        };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/v1/billing/budget',
      operationId: 'clearBudget',
      summary: 'Remove the monthly budget (a budget pause stays until POST /v1/billing/resume)',
      tags: ['billing'],
      access: billingRoot,
      responses: [{ status: 204, description: 'No budget now' }],
      async handle({ caller }) {
        await budgets.clear(caller!.tenantId);
        return { status: 204 };
      },
    }),
  ];
}
